/* SPDX-License-Identifier: MIT */
/*
 * Named network namespaces, made the way `ip netns add` makes them: a file
 * under /run/netns (a shared mount point) with the namespace bind-mounted
 * on it, so `ip netns list`, `ip -n NAME ...` and `tc -n NAME ...` see
 * exactly what twinlab built.
 */
#ifndef EMU_NETNS_H
#define EMU_NETNS_H

#include <stdbool.h>

#define NETNS_RUN_DIR "/run/netns"

/*
 * What a namespace is for, beyond what every one gets (lo up, IPv6 off
 * on every interface it will be given: no stray neighbour discovery on
 * the measured links). Each setting is a write under /proc/sys, whose
 * lookups slow down with every namespace on the host, so a namespace gets
 * only the ones its role needs.
 */
enum {
	NETNS_FORWARD = 1u << 0,	/* IPv4 forwarding on (a router) */
	NETNS_TCP = 1u << 1,		/* TCP ends here: Reno, and no clock
					 * of TCP's own that the twin lacks
					 * (a server) */
	NETNS_REORDER = 1u << 2,	/* ... and a loss only once the
					 * host's reordering is ruled out
					 * (a scenario without loss) */
};

/*
 * netns_add - create namespace `name` with the settings of `flags`
 * (NETNS_*). 0, -EEXIST, or -errno; nothing is left on failure.
 */
int netns_add(const char *name, unsigned flags)
	__attribute__((warn_unused_result));

/*
 * netns_add_open - netns_add, and while inside the new namespace open its
 * handle into *nsfd (may be NULL) and call inside(ctx) (may be NULL: what
 * a caller opens there, a socket say, costs no extra switch). A nonzero
 * return of inside fails it all, with that error; what inside opened is
 * the caller's to close. On failure *nsfd is -1.
 */
int netns_add_open(const char *name, unsigned flags, int *nsfd,
		   int (*inside)(void *ctx), void *ctx)
	__attribute__((warn_unused_result));

/*
 * netns_take_open - as netns_add_open, for a namespace someone else made
 * with its interfaces (a container's, a deployment's): the one named
 * `name` if there is one, else (may_adopt) the calling thread's own,
 * named `name` (*adopted: removing the name then leaves the namespace to
 * its owner), else -ENOENT. Its settings are made as for a fresh one,
 * IPv6 off on the interfaces it has too.
 */
int netns_take_open(const char *name, unsigned flags, bool may_adopt,
		    bool *adopted, int *nsfd, int (*inside)(void *ctx),
		    void *ctx)
	__attribute__((warn_unused_result));

#define NETNS_NAME_MAX 64	/* bytes of a name, with its NUL */

/* A name of /run/netns/NAME itself: not empty, no '/', not "." or "..",
 * shorter than NETNS_NAME_MAX. Every function here refuses others
 * (-EINVAL; netns_exists: false). */
bool netns_name_ok(const char *name);

/* netns_del - unmount and remove `name`. 0, -ENOENT or -errno. */
int netns_del(const char *name);

bool netns_exists(const char *name);

/* An O_RDONLY fd of the namespace, or -errno. */
int netns_open(const char *name);

/*
 * Enter `name` in the calling thread; *saved receives the namespace to
 * return to with netns_leave(). 0 or -errno.
 */
int netns_enter(const char *name, int *saved) __attribute__((warn_unused_result));
void netns_leave(int saved);

/*
 * netns_each - call fn(name, arg) for every namespace whose name starts
 * with `prefix` followed by '-'. Returns the number seen or -errno.
 */
int netns_each(const char *prefix, void (*fn)(const char *name, void *arg),
	       void *arg);

#endif
