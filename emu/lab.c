// SPDX-License-Identifier: MIT
/*
 * The emulation's names, state file, locks and digests; the rest of
 * building and removing it is in the files lab_impl.h names.
 *
 * Building and removing the emulation. Order of work in lab_up():
 *   1. every namespace (recorded in the state file as it is made);
 *   2. every veth, created from one end with its peer directly in the
 *      other namespace (IFLA_NET_NS_FD: no device is ever moved), one
 *      batch per namespace;
 *   3. per namespace, one batch of addresses, routes, qdiscs and
 *      cross-connects;
 *   4. the delay line, if asked.
 * Interface indices are chosen here (lo is 1, then 2, 3, ... in the order
 * below), so every batch can name its interfaces without lookups.
 */
#include "lab_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "delayline.h"
#include "impair.h"
#include "traffic.h"
#include "labstate.h"
#include "netns.h"
#include "nl.h"
#include "proc.h"
#include "twin/clock.h"
#include "twin/fl.h"
#include "twin/grow.h"
#include "twin/lpset.h"
#include "twin/partition.h"

void lab_ns_name(const char *prefix, const char *node, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%s", prefix, node);
}

void lab_access_if(int server, char *buf, size_t len)
{
	snprintf(buf, len, "acc%d", server);
}

void lab_lightpath_if(int lp, char *buf, size_t len)
{
	snprintf(buf, len, "lp%d", lp);
}

void lab_part_prefix(const char *prefix, int node, char *buf, size_t len)
{
	snprintf(buf, len, "%s%d", prefix, node);
}

int lab_link_node(const struct plan *p, int link, char *ifname)
{
	const struct scenario *sc = p->sc;
	int n2 = 2 * sc->nnodes;

	if (link < n2) {
		int s = link / 2;

		if (link % 2 == 0) {	/* server -> router */
			snprintf(ifname, 16, "%s", LAB_SERVER_IF);
			return s;
		}
		lab_access_if(s, ifname, 16);	/* router -> server */
		return sc->nodes[s].attach;
	}
	lab_lightpath_if((link - n2) / 2, ifname, 16);
	{
		const struct lightpath *lp = &p->net->lp[(link - n2) / 2];

		return link % 2 ? lp->b : lp->a;
	}
}

void lab_link_end(const struct plan *p, const char *prefix, int link,
		  char *ns, char *ifname)
{
	lab_ns_name(prefix, p->sc->nodes[lab_link_node(p, link, ifname)].name,
		    ns, 64);
}

void lab_state_path(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, LAB_STATE_DIR "/%s/state", prefix);
}

void lab_live_path(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, LAB_STATE_DIR "/%s/delayline", prefix);
}

/*
 * The delay line's live counters: a file in the prefix's state directory
 * (so down and clean remove it with the rest), mapped by the delay line
 * and by a run that watches it, whichever process built the emulation.
 */
struct dl_live *lab_live_create(const char *prefix)
{
	char path[256];
	struct dl_live *l;
	int fd;

	lab_live_path(prefix, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, sizeof(*l))) {
		close(fd);
		return NULL;
	}
	l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (l == MAP_FAILED)
		return NULL;
	l->magic = DL_LIVE_MAGIC;
	l->version = DL_LIVE_VERSION;
	return l;
}

int lab_delay_live_open(const char *prefix, struct dl_live **out)
{
	char path[256];
	struct dl_live *l;
	struct stat sb;
	int fd, err = 0;

	*out = NULL;
	if (!lab_prefix_ok(prefix))
		return -EINVAL;
	lab_live_path(prefix, path, sizeof(path));
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* input like the state file: exactly what a delay line would map */
	if (fstat(fd, &sb))
		err = -errno;
	else if (!S_ISREG(sb.st_mode) || sb.st_size != (off_t)sizeof(*l))
		err = -EINVAL;
	if (err) {
		close(fd);
		return err;
	}
	l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (l == MAP_FAILED)
		return -errno;
	if (l->magic != DL_LIVE_MAGIC || l->version != DL_LIVE_VERSION) {
		munmap(l, sizeof(*l));
		return -EINVAL;
	}
	*out = l;
	return 0;
}

void lab_delay_live_close(struct dl_live *l)
{
	if (l)
		munmap(l, sizeof(*l));
}

void lab_delay_at_once(struct dl_live *l, double s)
{
	if (l)
		atomic_store(&l->pass_until,
			     s > 0 ? mono_ns() + (uint64_t)(s * 1e9) : 0);
}

static void lock_path(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, LAB_STATE_DIR "/%s.lock", prefix);
}

int lab_lock(const char *prefix, const char *who, char *err, size_t len)
{
	char path[256], owner[160];

	if (!lab_prefix_ok(prefix)) {
		snprintf(err, len, "bad prefix '%s'", prefix);
		return -EINVAL;
	}
	if (mkdir(LAB_STATE_DIR, 0755) && errno != EEXIST) {
		snprintf(err, len, "cannot create '%s': %s", LAB_STATE_DIR,
			 strerror(errno));
		return -errno;
	}
	lock_path(prefix, path, sizeof(path));
	/*
	 * The owner removes the file when it lets go; whoever opened the
	 * old file meanwhile locks an unlinked inode, sees that, retries.
	 */
	for (int tries = 0; tries < 100; tries++) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		struct stat a, b;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			      0644), e;
		ssize_t n;

		if (fd < 0) {
			e = -errno;
			snprintf(err, len, "cannot open '%s': %s", path,
				 strerror(errno));
			return e;
		}
		if (fcntl(fd, F_SETLK, &fl) == 0) {
			if (fstat(fd, &a) || stat(path, &b) ||
			    a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
				close(fd);
				continue;
			}
			n = snprintf(owner, sizeof(owner), "%s, pid %d\n", who,
				     (int)getpid());
			if (ftruncate(fd, 0) ||
			    pwrite(fd, owner, (size_t)n, 0) != n) {
				e = -errno;
				snprintf(err, len, "cannot write '%s': %s",
					 path, strerror(errno));
				lab_unlock(prefix, fd);
				return e;
			}
			return fd;
		}
		e = errno;
		if (e != EAGAIN && e != EACCES) {
			close(fd);
			snprintf(err, len, "cannot lock '%s': %s", path,
				 strerror(e));
			return -e;
		}
		/* the owner: its pid from the kernel, its words from the file */
		fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET };
		if (fcntl(fd, F_GETLK, &fl) || fl.l_type == F_UNLCK) {
			close(fd);
			continue;	/* let go meanwhile: try again */
		}
		n = pread(fd, owner, sizeof(owner) - 1, 0);
		close(fd);
		owner[n > 0 ? n : 0] = '\0';
		owner[strcspn(owner, "\n")] = '\0';
		if (!owner[0] || strspn(owner, "abcdefghijklmnopqrstuvwxyz "
				       "0123456789,") != strlen(owner))
			snprintf(owner, sizeof(owner), "pid %d",
				 (int)fl.l_pid);
		snprintf(err, len, "prefix '%s' is in use by %s: wait for it, "
			 "stop it, or choose another --prefix", prefix, owner);
		return -EBUSY;
	}
	snprintf(err, len, "cannot lock '%s': it keeps changing", path);
	return -EAGAIN;
}

void lab_unlock(const char *prefix, int fd)
{
	char path[256];

	if (fd < 0)
		return;
	lock_path(prefix, path, sizeof(path));
	unlink(path);
	close(fd);
}

int lab_fail(struct lab *lab, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lab->err, lab->errlen, fmt, ap);
	va_end(ap);
	return err;
}

/* Count a namespace unless it is the one given (arg: its name or NULL). */
static void count_ns(const char *name, void *arg)
{
	struct { const char *but; int n; } *c = arg;

	if (!c->but || strcmp(name, c->but))
		c->n++;
}

bool lab_exists_but(const char *prefix, const char *but)
{
	struct { const char *but; int n; } c = { but, 0 };
	char path[256];
	struct stat st;

	lab_state_path(prefix, path, sizeof(path));
	if (stat(path, &st) == 0)
		return true;
	return netns_each(prefix, count_ns, &c) < 0 || c.n > 0;
}

bool lab_exists(const char *prefix)
{
	return lab_exists_but(prefix, NULL);
}

/* Append a line to the state file and push it to the disk cache now. */
int lab_record(struct lab *lab, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(lab->state, fmt, ap);
	va_end(ap);
	fputc('\n', lab->state);
	return fflush(lab->state) ? -errno : 0;
}

int lab_open_state(struct lab *lab, const struct lab_opts *o)
{
	char dir[256], path[256];
	int fd;

	/* one entry a line: a path may hold anything but a newline here */
	if (o->scenario_path && (strchr(o->scenario_path, '\n') ||
				 strlen(o->scenario_path) > 900))
		return lab_fail(lab, -EINVAL,
				"the scenario's path must be one "
				"line of at most 900 characters");
	if (mkdir(LAB_STATE_DIR, 0755) && errno != EEXIST)
		return lab_fail(lab, -errno, "cannot create '%s': %s",
				LAB_STATE_DIR, strerror(errno));
	snprintf(dir, sizeof(dir), LAB_STATE_DIR "/%s", lab->prefix);
	if (mkdir(dir, 0755))
		return lab_fail(lab, -errno, "cannot create '%s': %s", dir,
				strerror(errno));
	lab_state_path(lab->prefix, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || !(lab->state = fdopen(fd, "w"))) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		rmdir(dir);
		return lab_fail(lab, err, "cannot create '%s': %s", path,
				strerror(-err));
	}
	return lab_record(
		lab,
		"twinlab-state 1\nscenario %s\nscheduler %s\n"
		"dilation %.17g\n%s%s%sdigest %016llx",
		o->scenario_path ? o->scenario_path : "-", lab->p->scheduler,
		lab->dilation, o->node ? "part " : "", o->node ? o->node : "",
		o->node ? "\n" : "",
		(unsigned long long)lab_digest(lab->p, lab->a, o->set));
}

uint64_t lab_digest(const struct plan *p, const struct addressing *a,
		    const struct lpset *set)
{
	const struct scenario *sc = p->sc;
	char *text = NULL;
	size_t len = 0;
	uint64_t d;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return 0;
	/* %a: every number exactly */
	fprintf(f, "%a %a %s %d\n", sc->scale, sc->wavelength_gbps,
		sc->addressing, set ? set->nepochs : 0);
	for (int i = 0; i < sc->nnodes; i++) {
		const struct scn_node *n = &sc->nodes[i];

		fprintf(f, "n %s %d %d %a %a\n", n->name, n->kind, n->attach,
			n->access_gbps, n->access_km);
	}
	for (int i = 0; i < sc->nfibres; i++) {
		const struct scn_fibre *fb = &sc->fibres[i];

		fprintf(f, "f %d %d %a %a %d\n", fb->a, fb->b, fb->km, fb->loss,
			fb->wavelengths);
	}
	for (int l = 0; l < p->net->nlp; l++) {
		const struct lightpath *lp = &p->net->lp[l];

		fprintf(f, "l %d %d %d %a %u", lp->a, lp->b, lp->lambda,
			lp->cap_gbps, a->lightpath[l]);
		for (int k = 0; k < lp->nfib; k++)
			fprintf(f, " %d", lp->fib[k]);
		fputc('\n', f);
	}
	for (int t = 0; t < p->ntasks; t++) {
		const struct task_plan *tp = &p->tasks[t];

		fprintf(f, "t %s %d %d\n", tp->task->name, tp->blocked,
			tp->nmodels);
		for (int m = 0; m < tp->nmodels && !tp->blocked; m++) {
			fprintf(f, " m %d %u", tp->server[m],
				a->access[tp->server[m]]);
			for (int u = 0; m && u < 2; u++) {
				const struct ppath *pp = u ? &tp->up.path[m] :
							     &tp->bcast.path[m];
				const struct endpoint *ep = &a->ep[t][2 * m + u];

				fprintf(f, " %u>%u:", ep->src, ep->dst);
				for (int h = 0; h < pp->nhops; h++)
					fprintf(f, " %d.%d.%d", pp->hops[h].kind,
						pp->hops[h].idx,
						pp->hops[h].dir);
			}
			fputc('\n', f);
		}
	}
	if (fclose(f) || !text) {
		free(text);
		return 0;
	}
	d = fl_digest(text, len);
	free(text);
	return d ? d : 1;
}

int lab_same(const char *prefix, const struct plan *p,
	     const struct addressing *a, const struct lpset *set,
	     double dilation, char *err, size_t len)
{
	struct lab_state st;
	uint64_t want = lab_digest(p, a, set);
	int e = lab_state_read(prefix, &st);

	if (e) {
		snprintf(err, len, "cannot read the state of the emulation up "
			 "under prefix '%s': %s", prefix, strerror(-e));
		return e;
	}
	if (st.part[0]) {
		snprintf(err, len, "prefix '%s' holds node %s's part of an "
			 "emulation only ('up --node'), which a run cannot "
			 "use: 'twinlab down --prefix %s' first, or use another "
			 "prefix", prefix, st.part, prefix);
		lab_state_release(&st);
		return -ESTALE;
	}
	e = !want ? -ENOMEM :
	    strcmp(st.scheduler, p->scheduler) ? -ESTALE :
	    st.dilation != (dilation > 0 ? dilation : 1) ? -ESTALE :
	    st.digest != want ? -ESTALE : 0;
	if (e == -ESTALE)
		snprintf(err, len, "the emulation up under prefix '%s' is not "
			 "the network this run plans (it was built from '%s' "
			 "with scheduler %s at dilation %g%s): 'twinlab down "
			 "--prefix %s' first, or use another prefix", prefix,
			 st.scenario[0] ? st.scenario : "?",
			 st.scheduler[0] ? st.scheduler : "?", st.dilation,
			 !st.digest ? ", and records no digest" :
			 st.digest != want ? "; its network differs" : "",
			 prefix);
	else if (e)
		snprintf(err, len, "out of memory");
	lab_state_release(&st);
	return e;
}

void lab_release(struct lab *lab)
{
	if (!lab)
		return;
	for (int i = 0; lab->n && i < lab_nns(lab); i++) {
		if (lab->n[i].nl != lab->void_nl)
			nl_close(lab->n[i].nl);
		if (lab->n[i].fd >= 0)
			close(lab->n[i].fd);
	}
	nl_close(lab->void_nl);
	if (lab->pt)
		partition_release(lab->pt);
	FREE_ALL(lab->pt, lab->split_und, lab->split_side, lab->split_vs);
	if (lab->state)
		fclose(lab->state);
	FREE_ALL(lab->n, lab->acc, lab->lp, lab->ad, lab->line, lab->ing,
		 lab->peers, lab);
}

void lab_free(struct lab *lab)
{
	lab_release(lab);
}

/* Inside a node's new namespace: its rtnetlink socket. */
int lab_open_nl(void *ctx)
{
	struct lab_node *n = ctx;

	n->nl = nl_open(NULL);
	if (!n->nl)
		return -errno;
	nl_label(n->nl, n->ns);
	return 0;
}

unsigned lab_ns_flags(const struct scenario *sc, int i)
{
	enum node_kind kind = sc->nodes[i].kind;

	return kind == NODE_ROUTER ? NETNS_FORWARD :
	       kind == NODE_SERVER ? NETNS_TCP | (scenario_has_loss(sc) ?
						  0 : NETNS_REORDER) : 0;
}

/*
 * fn(&arg[t]) for t in [0, n) (elements of `size` bytes; n at most 8):
 * t > 0 each in a thread of its own where one can start, taking no signal
 * (the caller's handlers see them all); t = 0, and any whose thread could
 * not start, in this thread. Returns once all have.
 */
void lab_side_by_side(void *(*fn)(void *), void *arg, size_t size, int n)
{
	pthread_t th[8];
	sigset_t all, old;
	int nth = 1;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	while (nth < n && nth < 8 &&
	       !pthread_create(&th[nth], NULL, fn, (char *)arg + nth * size))
		nth++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fn(arg);
	for (int t = 1; t < nth; t++)
		pthread_join(th[t], NULL);
	for (int t = nth; t < n; t++)
		fn((char *)arg + t * size);
}
