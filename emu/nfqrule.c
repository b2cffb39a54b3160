// SPDX-License-Identifier: MIT
/* The delay line's iptables rules; see nfqrule.h. */
#include "nfqrule.h"

#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "delayline.h"
#include "netns.h"
#include "spawn.h"
#include "twin/grow.h"

#define NFQRULE_TIMEOUT_MS 10000

static const char *const iptables_paths[] = {
	"/usr/sbin/iptables-nft",
	"/usr/sbin/iptables",
};

/* the restore program of the same backend, at the same index */
static const char *const restore_paths[] = {
	"/usr/sbin/iptables-nft-restore",
	"/usr/sbin/iptables-restore",
};

/* The first backend whose iptables is here (its index), or -1. */
static int backend(void)
{
	for (size_t i = 0; i < sizeof(iptables_paths) /
			       sizeof(iptables_paths[0]); i++)
		if (access(iptables_paths[i], X_OK) == 0)
			return (int)i;
	return -1;
}

const char *nfqrule_iptables(void)
{
	int i = backend();

	return i < 0 ? NULL : iptables_paths[i];
}

bool nfqrule_ifname_ok(const char *name)
{
	size_t len = strnlen(name, IFNAMSIZ);

	if (len == 0 || len == IFNAMSIZ || name[0] == '-')
		return false;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (; *name; name++)
		if (*name == '/' || *name == ':' || *name <= ' ')
			return false;
	return true;
}

/* Run iptables: its exit status (>= 0; 128 + signal when killed), or
 * -errno when it could not be run or ran out of time. */
static int iptables(int nsfd, const char *path, char *const argv[])
{
	struct spawn sp = { .path = path, .argv = argv, .nsfd = nsfd,
			    .out_fd = -1, .timeout_ms = NFQRULE_TIMEOUT_MS };
	struct spawn_result res;
	int err = spawn_run(&sp, &res);

	if (err)
		return err;
	if (res.timed_out)
		return -ETIMEDOUT;
	return spawn_exit_status(&res) >= 0 ? spawn_exit_status(&res) :
					      128 + WTERMSIG(res.status);
}

/* iptables' exit status as -errno (its documented codes: 1, 2, 4). */
static int iptables_err(int status)
{
	if (status <= 0)
		return status;
	if (status == 2)
		return -EINVAL;
	if (status == 4)
		return -EAGAIN;
	return -EIO;
}

/*
 * Add (after checking that it is not there) or remove the rule argv
 * describes in netns; argv[3] is the slot for -C, -A or -D.
 */
static int rule_set(const char *netns, bool add, char *argv[])
{
	const char *path = nfqrule_iptables();
	int nsfd, st, err;

	if (!path)
		return -ENOENT;
	nsfd = netns_open(netns);
	if (nsfd < 0)
		return nsfd;
	if (add) {
		/* -C answers 0 when the rule exists, 1 when it does not */
		argv[3] = "-C";
		st = iptables(nsfd, path, argv);
		if (st == 0) {
			err = -EEXIST;
			goto close_nsfd;
		}
		if (st < 0 || st == 2) {
			err = iptables_err(st);
			goto close_nsfd;
		}
		argv[3] = "-A";
		err = iptables_err(iptables(nsfd, path, argv));
	} else {
		argv[3] = "-D";
		st = iptables(nsfd, path, argv);
		err = st == 1 ? -ENOENT : iptables_err(st);
	}
close_nsfd:
	close(nsfd);
	return err;
}

static bool queue_rule_ok(const char *netns, const char *chain,
			  bool match_in, const char *ifname)
{
	if (!netns || !chain || !ifname || !netns_name_ok(netns) ||
	    !nfqrule_ifname_ok(ifname))
		return false;
	return !strcmp(chain, "FORWARD") ||
	       (match_in && !strcmp(chain, "PREROUTING")) ||
	       (!match_in && !strcmp(chain, "POSTROUTING")) ||
	       (!match_in && !strcmp(chain, "OUTPUT"));
}

static bool loss_rule_ok(const char *netns, const char *ifname, double p)
{
	return netns && ifname && netns_name_ok(netns) &&
	       nfqrule_ifname_ok(ifname) && p > 0 && p <= 1;
}

int nfqrule_set(const char *netns, bool add, const char *chain,
		bool match_in, const char *ifname, uint16_t num)
{
	char numbuf[8];
	char *argv[] = {
		"iptables", "-t", "mangle", NULL, (char *)chain,
		match_in ? "-i" : "-o", (char *)ifname,
		"-j", "NFQUEUE", "--queue-num", numbuf, NULL
	};

	if (!queue_rule_ok(netns, chain, match_in, ifname))
		return -EINVAL;
	snprintf(numbuf, sizeof(numbuf), "%u", (unsigned int)num);
	return rule_set(netns, add, argv);
}

int nfqrule_loss_set(const char *netns, bool add, const char *ifname,
		     double p)
{
	char pbuf[32];
	char *argv[] = {
		"iptables", "-t", "filter", NULL, "FORWARD",
		"-o", (char *)ifname, "-m", "statistic", "--mode", "random",
		"--probability", pbuf, "-j", "DROP", NULL
	};

	if (!loss_rule_ok(netns, ifname, p))
		return -EINVAL;
	/* iptables keeps the probability as a 31-bit fraction and prints it
	 * with 11 decimals; -C and -D match what -A was given that way */
	snprintf(pbuf, sizeof(pbuf), "%.11f", p);
	return rule_set(netns, add, argv);
}

/* ---- a batch ------------------------------------------------------------ */

/* A namespace's rules: each table's lines, in the order they came. */
struct nfqrule_ns {
	char name[DL_NETNS_MAX];
	char *mangle, *filter;
	size_t mangle_len, filter_len;
};

/* The namespace's entry, made when it is new; NULL: no memory. */
static struct nfqrule_ns *batch_ns(struct nfqrule_batch *b, const char *netns)
{
	struct nfqrule_ns *v;

	for (int i = 0; i < b->n; i++)
		if (!strcmp(b->ns[i].name, netns))
			return &b->ns[i];
	v = grow_array(b->ns, &b->cap, b->n, sizeof(*v), 16);
	if (!v)
		return NULL;
	b->ns = v;
	snprintf(v[b->n].name, sizeof(v[b->n].name), "%s", netns);
	return &v[b->n++];
}

/* Append one formatted line to *buf (*len bytes). 0 or -ENOMEM. */
static int add_line(char **buf, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_line(char **buf, size_t *len, const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int n;
	char *v;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -EINVAL;
	v = realloc(*buf, *len + (size_t)n + 1);
	if (!v)
		return -ENOMEM;
	memcpy(v + *len, line, (size_t)n + 1);
	*buf = v;
	*len += (size_t)n;
	return 0;
}

int nfqrule_batch_queue(struct nfqrule_batch *b, const char *netns,
			const char *chain, bool match_in, const char *ifname,
			uint16_t num)
{
	struct nfqrule_ns *ns;

	if (!queue_rule_ok(netns, chain, match_in, ifname) ||
	    strlen(netns) >= DL_NETNS_MAX)
		return -EINVAL;
	ns = batch_ns(b, netns);
	if (!ns)
		return -ENOMEM;
	return add_line(&ns->mangle, &ns->mangle_len,
			"-A %s %s %s -j NFQUEUE --queue-num %u\n", chain,
			match_in ? "-i" : "-o", ifname, (unsigned int)num);
}

int nfqrule_batch_loss(struct nfqrule_batch *b, const char *netns,
		       const char *ifname, double p)
{
	struct nfqrule_ns *ns;

	if (!loss_rule_ok(netns, ifname, p) || strlen(netns) >= DL_NETNS_MAX)
		return -EINVAL;
	ns = batch_ns(b, netns);
	if (!ns)
		return -ENOMEM;
	return add_line(&ns->filter, &ns->filter_len,
			"-A FORWARD -o %s -m statistic --mode random "
			"--probability %.11f -j DROP\n", ifname, p);
}

/* iptables-restore's input for one namespace; NULL: no memory. */
static char *restore_text(const struct nfqrule_ns *ns, size_t *len)
{
	size_t n = ns->mangle_len + ns->filter_len + 64;
	char *t = malloc(n);
	int k;

	if (!t)
		return NULL;
	k = snprintf(t, n, "%s%s%s%s%s%s",
		     ns->mangle ? "*mangle\n" : "", ns->mangle ? ns->mangle : "",
		     ns->mangle ? "COMMIT\n" : "",
		     ns->filter ? "*filter\n" : "", ns->filter ? ns->filter : "",
		     ns->filter ? "COMMIT\n" : "");
	*len = k < 0 ? 0 : (size_t)k;
	return t;
}

int nfqrule_batch_apply(const struct nfqrule_batch *b, char *err, size_t len)
{
	int k = backend(), e = 0;
	const char *path = k >= 0 && access(restore_paths[k], X_OK) == 0 ?
				   restore_paths[k] : NULL;

	if (!path && b->n) {
		snprintf(err, len, "cannot add the impairments' rules: no "
			 "iptables-restore (install the iptables package)");
		return -ENOENT;
	}
	for (int i = 0; i < b->n && !e; i++) {
		char *argv[] = { "iptables-restore", "--noflush", NULL };
		struct spawn sp = { .path = path, .argv = argv, .out_fd = -1,
				    .timeout_ms = NFQRULE_TIMEOUT_MS };
		struct spawn_result res;
		char why[SPAWN_ERR_MAX + 64];
		size_t tl;
		char *text = restore_text(&b->ns[i], &tl);

		if (!text) {
			snprintf(err, len, "out of memory");
			return -ENOMEM;
		}
		sp.in = text;
		sp.in_len = tl;
		sp.nsfd = netns_open(b->ns[i].name);
		if (sp.nsfd < 0) {
			e = sp.nsfd;
			snprintf(err, len, "cannot add the impairments' rules "
				 "in netns '%s': %s", b->ns[i].name,
				 strerror(-e));
		} else {
			e = spawn_run(&sp, &res);
			close(sp.nsfd);
			if (e)
				snprintf(err, len, "cannot add the impairments' "
					 "rules in netns '%s': cannot run "
					 "%s: %s", b->ns[i].name, path,
					 strerror(-e));
			else if (!spawn_ok(&res)) {
				spawn_describe(&res, why, sizeof(why));
				snprintf(err, len, "cannot add the impairments' "
					 "rules in netns '%s': %s %s",
					 b->ns[i].name, path, why);
				e = res.timed_out ? -ETIMEDOUT : -EINVAL;
			}
		}
		free(text);
	}
	return e;
}

void nfqrule_batch_release(struct nfqrule_batch *b)
{
	for (int i = 0; i < b->n; i++)
		FREE_ALL(b->ns[i].mangle, b->ns[i].filter);
	free(b->ns);
	*b = (struct nfqrule_batch){ 0 };
}
