// SPDX-License-Identifier: MIT
/*
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
#include "lab.h"

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
#include "twin/fl.h"
#include "twin/lpset.h"

struct lab_node {
	char ns[DL_NETNS_MAX];
	int fd;
	struct nl *nl;
	int next;		/* next free ifindex */
};

/*
 * A veth's far end: created in another namespace by the near end's
 * request, it is brought up from its own namespace in the next phase (the
 * kernel refuses IFF_UP on a peer created in another namespace).
 */
struct peer_end {
	int node, index;
	char name[16];
};

struct lab {
	char prefix[LAB_PREFIX_MAX + 1];
	double dilation;	/* N: rates / N, delays and TCP clocks x N */
	const struct plan *p;
	const struct addressing *a;
	struct lab_node *n;	/* per scenario node */
	int *acc;		/* per server: index of acc<s> at its router */
	int *lp;		/* per lightpath: [2l] at a, [2l+1] at b */
	int *ad;		/* per lightpath: ROADM ends, same layout */
	int *line;		/* per (fibre, wavelength, end): index or 0 */
	bool *ing;		/* per line slot: its ingress qdisc is made */
	int words;		/* wavelengths per fibre in `line` */
	const struct lpset *set;	/* the timeline followed, or NULL */
	struct peer_end *peers;	/* veth ends to bring up after creation */
	int npeers, cappeers;
	FILE *state;
	char *err;
	size_t errlen;
};

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

void lab_link_end(const struct plan *p, const char *prefix, int link,
		  char *ns, char *ifname)
{
	const struct scenario *sc = p->sc;
	int n2 = 2 * sc->nnodes;

	if (link < n2) {
		int s = link / 2;

		if (link % 2 == 0) {	/* server -> router */
			lab_ns_name(prefix, sc->nodes[s].name, ns, 64);
			snprintf(ifname, 16, "%s", LAB_SERVER_IF);
		} else {		/* router -> server */
			lab_ns_name(prefix, sc->nodes[sc->nodes[s].attach].name,
				    ns, 64);
			lab_access_if(s, ifname, 16);
		}
	} else {
		int l = (link - n2) / 2;
		const struct lightpath *lp = &p->net->lp[l];

		lab_ns_name(prefix, sc->nodes[link % 2 ? lp->b : lp->a].name,
			    ns, 64);
		lab_lightpath_if(l, ifname, 16);
	}
}

static void state_path(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, LAB_STATE_DIR "/%s/state", prefix);
}

static void live_path(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, LAB_STATE_DIR "/%s/delayline", prefix);
}

/*
 * The delay line's live counters: a file in the prefix's state directory
 * (so down and clean remove it with the rest), mapped by the delay line
 * and by a run that watches it, whichever process built the emulation.
 */
static struct dl_live *live_create(const char *prefix)
{
	char path[256];
	struct dl_live *l;
	int fd;

	live_path(prefix, path, sizeof(path));
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
	live_path(prefix, path, sizeof(path));
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

static int fail(struct lab *lab, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct lab *lab, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lab->err, lab->errlen, fmt, ap);
	va_end(ap);
	return err;
}

static void ignore_ns(const char *name, void *arg)
{
	(void)name;
	(void)arg;
}

bool lab_exists(const char *prefix)
{
	char path[256];
	struct stat st;

	state_path(prefix, path, sizeof(path));
	if (stat(path, &st) == 0)
		return true;
	return netns_each(prefix, ignore_ns, NULL) > 0;
}

/* Append a line to the state file and push it to the disk cache now. */
static int record(struct lab *lab, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int record(struct lab *lab, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(lab->state, fmt, ap);
	va_end(ap);
	fputc('\n', lab->state);
	return fflush(lab->state) ? -errno : 0;
}

static int open_state(struct lab *lab, const struct lab_opts *o)
{
	char dir[256], path[256];
	int fd;

	/* one entry a line: a path may hold anything but a newline here */
	if (o->scenario_path && (strchr(o->scenario_path, '\n') ||
				 strlen(o->scenario_path) > 900))
		return fail(lab, -EINVAL, "the scenario's path must be one "
			    "line of at most 900 characters");
	if (mkdir(LAB_STATE_DIR, 0755) && errno != EEXIST)
		return fail(lab, -errno, "cannot create '%s': %s",
			    LAB_STATE_DIR, strerror(errno));
	snprintf(dir, sizeof(dir), LAB_STATE_DIR "/%s", lab->prefix);
	if (mkdir(dir, 0755))
		return fail(lab, -errno, "cannot create '%s': %s", dir,
			    strerror(errno));
	state_path(lab->prefix, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || !(lab->state = fdopen(fd, "w"))) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		rmdir(dir);
		return fail(lab, err, "cannot create '%s': %s", path,
			    strerror(-err));
	}
	return record(lab, "twinlab-state 1\nscenario %s\nscheduler %s\n"
		      "dilation %.17g\ndigest %016llx",
		      o->scenario_path ? o->scenario_path : "-",
		      lab->p->scheduler, lab->dilation,
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

static void free_lab(struct lab *lab)
{
	const struct scenario *sc;

	if (!lab)
		return;
	sc = lab->p->sc;
	for (int i = 0; lab->n && i < sc->nnodes; i++) {
		nl_close(lab->n[i].nl);
		if (lab->n[i].fd >= 0)
			close(lab->n[i].fd);
	}
	if (lab->state)
		fclose(lab->state);
	free(lab->n);
	free(lab->acc);
	free(lab->lp);
	free(lab->ad);
	free(lab->line);
	free(lab->ing);
	free(lab->peers);
	free(lab);
}

void lab_free(struct lab *lab)
{
	free_lab(lab);
}

/* Inside a node's new namespace: its rtnetlink socket. */
static int open_nl(void *ctx)
{
	struct lab_node *n = ctx;

	n->nl = nl_open(NULL);
	if (!n->nl)
		return -errno;
	nl_label(n->nl, n->ns);
	return 0;
}

unsigned lab_ns_flags(enum node_kind kind)
{
	return kind == NODE_ROUTER ? NETNS_FORWARD :
	       kind == NODE_SERVER ? NETNS_TCP : 0;
}

/*
 * fn(&arg[t]) for t in [0, n) (elements of `size` bytes; n at most 8):
 * t > 0 each in a thread of its own where one can start, taking no signal
 * (the caller's handlers see them all); t = 0, and any whose thread could
 * not start, in this thread. Returns once all have.
 */
static void side_by_side(void *(*fn)(void *), void *arg, size_t size, int n)
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

/*
 * Namespaces are made by LAB_NS_THREADS threads side by side, node i by
 * thread i % LAB_NS_THREADS: much of making one (the kernel's set-up of
 * a namespace, its sysctls) runs while another is made. A thread stops
 * at its first failure, or once another has failed at a lower node.
 */
#define LAB_NS_THREADS 2

struct ns_maker {
	struct lab *lab;
	int first, step;
	int *failed;		/* the lowest node that failed, or nnodes */
	pthread_mutex_t *lock;
	int err;		/* this one's failure (at a node of its own) */
};

static void *make_some(void *arg)
{
	struct ns_maker *m = arg;
	const struct scenario *sc = m->lab->p->sc;

	for (int i = m->first; i < sc->nnodes; i += m->step) {
		struct lab_node *n = &m->lab->n[i];
		bool stop;

		pthread_mutex_lock(m->lock);
		stop = *m->failed < i;
		pthread_mutex_unlock(m->lock);
		if (stop)
			break;
		m->err = netns_add_open(n->ns, lab_ns_flags(sc->nodes[i].kind),
					&n->fd, open_nl, n);
		if (m->err) {
			pthread_mutex_lock(m->lock);
			if (i < *m->failed)
				*m->failed = i;
			pthread_mutex_unlock(m->lock);
			break;
		}
	}
	return NULL;
}

static int make_namespaces(struct lab *lab)
{
	const struct scenario *sc = lab->p->sc;
	struct ns_maker m[LAB_NS_THREADS];
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int failed = sc->nnodes, err;

	for (int i = 0; i < sc->nnodes; i++)
		lab_ns_name(lab->prefix, sc->nodes[i].name, lab->n[i].ns,
			    sizeof(lab->n[i].ns));
	for (int t = 0; t < LAB_NS_THREADS; t++)
		m[t] = (struct ns_maker){ .lab = lab, .first = t,
					  .step = LAB_NS_THREADS,
					  .failed = &failed, .lock = &lock };
	side_by_side(make_some, m, sizeof(m[0]), LAB_NS_THREADS);
	/* recorded in the nodes' order, what was made */
	for (int i = 0; i < sc->nnodes; i++) {
		struct lab_node *n = &lab->n[i];

		if (n->fd < 0)
			continue;
		err = record(lab, "netns %s", n->ns);
		if (err)
			return fail(lab, err, "cannot write state: %s",
				    strerror(-err));
		n->next = 2;
		err = nl_link_up(n->nl, 1, "lo");
		if (err)
			return fail(lab, err, "out of memory");
	}
	/* node i is maker i % LAB_NS_THREADS's */
	err = failed < sc->nnodes ? m[failed % LAB_NS_THREADS].err : 0;
	if (err)
		return fail(lab, err, "cannot create netns '%s': %s",
			    lab->n[failed].ns, strerror(-err));
	return 0;
}

static int commit_all(struct lab *lab)
{
	const struct scenario *sc = lab->p->sc;

	for (int i = 0; i < sc->nnodes; i++) {
		int err = nl_commit(lab->n[i].nl);

		if (err)
			return fail(lab, err, "%s", nl_error(lab->n[i].nl));
	}
	return 0;
}

/* A veth between nodes u and v, created from u's namespace. */
static int veth(struct lab *lab, int u, const char *un, int v, const char *vn,
		int *ui, int *vi)
{
	struct peer_end *pe;

	*ui = lab->n[u].next++;
	*vi = lab->n[v].next++;
	if (lab->npeers == lab->cappeers) {
		int ncap = lab->cappeers ? 2 * lab->cappeers : 64;

		pe = realloc(lab->peers, (size_t)ncap * sizeof(*pe));
		if (!pe)
			return -ENOMEM;
		lab->peers = pe;
		lab->cappeers = ncap;
	}
	pe = &lab->peers[lab->npeers++];
	pe->node = v;
	pe->index = *vi;
	snprintf(pe->name, sizeof(pe->name), "%s", vn);
	return nl_veth(lab->n[u].nl, un, *ui, vn, *vi, lab->n[v].fd);
}

/* Whether lightpath l of the plan is lit in epoch e (no set: always). */
static bool lab_lit(const struct lab *lab, int e, int l)
{
	return !lab->set || lab->set->lit[e][l];
}

/* Wavelengths per fibre in a line slot's numbering: the most any has. */
static int max_wavelengths(const struct scenario *sc)
{
	int w = 1;

	for (int i = 0; i < sc->nfibres; i++)
		if (sc->fibres[i].wavelengths > w)
			w = sc->fibres[i].wavelengths;
	return w;
}

static int line_slot(int words, int fibre, int lambda, int end)
{
	return (fibre * words + lambda) * 2 + end;
}

static int make_links(struct lab *lab)
{
	const struct plan *p = lab->p;
	const struct scenario *sc = p->sc;
	char a[16], b[16];
	int err = 0;

	for (int s = 0; s < sc->nnodes && !err; s++) {
		int ui;

		if (sc->nodes[s].kind != NODE_SERVER)
			continue;
		lab_access_if(s, b, sizeof(b));
		err = veth(lab, s, LAB_SERVER_IF, sc->nodes[s].attach, b, &ui,
			   &lab->acc[s]);
	}
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];
		int at = sc->nodes[lp->a].attach;

		lab_lightpath_if(l, a, sizeof(a));
		snprintf(b, sizeof(b), "ad%d", l);
		err = veth(lab, lp->a, a, at, b, &lab->lp[2 * l],
			   &lab->ad[2 * l]);
		if (!err)
			err = veth(lab, lp->b, a, sc->nodes[lp->b].attach, b,
				   &lab->lp[2 * l + 1], &lab->ad[2 * l + 1]);
		/*
		 * one veth per wavelength per fibre, from the fibre's end a;
		 * once, where lightpaths of different epochs share it
		 */
		for (int i = 0; i < lp->nfib && !err; i++) {
			const struct scn_fibre *f = &sc->fibres[lp->fib[i]];

			if (lab->line[line_slot(lab->words, lp->fib[i],
						lp->lambda, 0)])
				continue;
			snprintf(a, sizeof(a), "f%dw%d", lp->fib[i], lp->lambda);
			err = veth(lab, f->a, a, f->b, a,
				   &lab->line[line_slot(lab->words, lp->fib[i],
							lp->lambda, 0)],
				   &lab->line[line_slot(lab->words, lp->fib[i],
							lp->lambda, 1)]);
		}
	}
	if (err)
		return fail(lab, err, "out of memory");
	return commit_all(lab);
}

/* A link's emulated rate: physical / scale / dilation. */
static double emulated_bps(const struct scenario *sc, double gbps,
			   double dilation)
{
	return gbps * 1e9 / sc->scale / dilation;
}

static uint64_t rate_bps(const struct lab *lab, double gbps)
{
	return (uint64_t)emulated_bps(lab->p->sc, gbps, lab->dilation);
}

/*
 * Every shaped link: a token bucket at `bps` of about one frame, so
 * that it shapes at the time scale of a message, not only of a round (a
 * bucket of 64 KiB let a whole round's bytes through at the speed of the
 * host). At high emulated rates the bucket holds LAB_BURST_US of sending
 * instead, because this host's timers wake 50-100 us late and a one-frame
 * bucket then loses tokens; dilation brings rates down to where one frame
 * is the bucket.
 *
 * Where more than one transfer's data, or data and ACKs, leave on the
 * link (the transfers' /32s, see twin/addr.h), the bucket (tbf) has an
 * htb under it with one class per data destination, served a frame at a
 * time in turn, and everything else (the ACKs of every transfer the link
 * answers, and what no class claims) ahead of them: transfers that share
 * a link share it max-min fairly, as the twin assumes, and ACKs never
 * wait behind a queue of data; all of it passes the one bucket. Where
 * nothing is shared, the bucket alone. Every htb class costs the kernel
 * a filter block, each registered in a host-wide list that it walks when
 * the next is made: no class for the link's rate (the bucket is it), none
 * for ACKs, none where nothing is shared (a link of the 2,000-namespace
 * line had four blocks, now two; the build 7.85 -> 5.34 s).
 * A single FIFO would serve whole messages in their order of arrival (TCP
 * sends a message at once: no slow start), which finishes some earlier
 * and none later than fair sharing, so measured rounds came out shorter
 * than the twin's. Each class queues at most 50 ms of scenario time at
 * the link's rate, at least 64 KiB.
 */
#define LAB_BURST 2048u
#define LAB_BURST_US 1000
#define LAB_QUANTUM 1514u	/* one Ethernet frame per turn */
#define LAB_CLASSES_MAX 60000

/* Per directed link: its data destinations, and whether it carries ACKs. */
struct dsts {
	uint32_t *a;
	int n, cap;
	bool acks;
};

static int dst_add(struct dsts *d, uint32_t a)
{
	for (int i = 0; i < d->n; i++)
		if (d->a[i] == a)
			return 0;
	if (d->n == d->cap) {
		int cap = d->cap ? 2 * d->cap : 8;
		uint32_t *x = realloc(d->a, (size_t)cap * sizeof(*x));

		if (!x)
			return -ENOMEM;
		d->a = x;
		d->cap = cap;
	}
	d->a[d->n++] = a;
	return 0;
}

static void dsts_free(struct dsts *d, int n)
{
	for (int i = 0; d && i < n; i++)
		free(d[i].a);
	free(d);
}

/* Per directed link (plan_link), the destinations that leave on it. */
static int access_dsts(void *ctx, const struct ppath *pp,
		       const struct endpoint *ep)
{
	struct dsts *d = ctx;

	d[2 * pp->to].acks = true;
	return dst_add(&d[2 * pp->from], ep->dst);
}

/*
 * fn for every transfer of every task the lab will run: those of its plan
 * and, following a set, each other task in the first epoch it runs (its
 * addresses are the same in every epoch; its paths may not be).
 */
static int each_transfer(const struct lab *lab,
			 int (*fn)(void *ctx, const struct ppath *pp,
				   const struct endpoint *ep),
			 void *ctx)
{
	const struct lpset *set = lab->set;
	int err = 0;

	for (int t = 0; t < lab->p->ntasks && !err; t++) {
		int e = 0;

		while (set && e < set->nepochs - 1 && !set->runs[e][t])
			e++;
		err = addr_task_transfers(set ? set->plan[e] : lab->p, lab->a,
					  t, fn, ctx);
	}
	return err;
}

/* The addresses that only answer (a transfer's or a flow's source). */
struct answers {
	uint32_t *a;
	size_t n, cap;
};

static int answer_add(void *ctx, const struct ppath *pp,
		      const struct endpoint *ep)
{
	struct answers *s = ctx;

	(void)pp;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint32_t *x = realloc(s->a, cap * sizeof(*x));

		if (!x)
			return -ENOMEM;
		s->a = x;
		s->cap = cap;
	}
	s->a[s->n++] = ep->src;
	return 0;
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* The destinations of p's routes (addressed by ad) on the links they take. */
static int route_dsts(struct dsts *d, const struct plan *p,
		      const struct addressing *ad)
{
	struct answers s = { 0 };
	int err = addr_each_transfer(p, ad, answer_add, &s);

	for (int i = 0; i < ad->nbg && !err; i++)
		err = answer_add(&s, NULL, &ad->bg[i]);
	if (s.n)
		qsort(s.a, s.n, sizeof(*s.a), u32_cmp);
	for (int i = 0; i < ad->nroutes && !err; i++) {
		const struct route *rt = &ad->routes[i];

		if (s.n && bsearch(&rt->dst, s.a, s.n, sizeof(*s.a), u32_cmp))
			d[rt->link].acks = true;
		else
			err = dst_add(&d[rt->link], rt->dst);
	}
	free(s.a);
	return err;
}

static struct dsts *link_dsts(const struct lab *lab)
{
	const struct plan *p = lab->p;
	const struct addressing *ad = lab->a;
	struct dsts *d = calloc((size_t)plan_nlinks(p) + 1, sizeof(*d));
	int err = d ? route_dsts(d, p, ad) : -ENOMEM;

	/* and every other epoch's, on the links it will take */
	for (int e = 1; lab->set && e < lab->set->nepochs && !err; e++) {
		struct addressing *x = addressing_new(lab->set->plan[e]);

		err = x ? route_dsts(d, lab->set->plan[e], x) : -errno;
		addressing_free(x);
	}
	/* servers send on their access link: data one way, ACKs back */
	if (!err)
		err = each_transfer(lab, access_dsts, d);
	/* and background traffic from a server (to one: what it answers) */
	for (int i = 0; i < p->nbg && !err; i++) {
		const struct scn_bg *bg = p->bg[i].bg;

		if (p->sc->nodes[bg->from].kind == NODE_SERVER)
			err = dst_add(&d[2 * bg->from], ad->bg[i].dst);
		if (p->sc->nodes[bg->to].kind == NODE_SERVER)
			d[2 * bg->to].acks = true;
	}
	if (err) {
		dsts_free(d, d ? plan_nlinks(p) : 0);
		errno = -err;
		return NULL;
	}
	return d;
}

static int shape(struct lab *lab, struct nl *nl, int index, const char *name,
		 uint64_t bps, const struct dsts *d)
{
	double bytes = (double)bps / 8;
	double limit = bytes * 0.050 * lab->dilation;
	double burst = bytes * LAB_BURST_US / 1e6;
	int err;

	if (d->n > LAB_CLASSES_MAX)
		return -E2BIG;
	if (limit < 65536)
		limit = 65536;
	if (limit > UINT32_MAX)
		limit = UINT32_MAX;
	if (burst < LAB_BURST)
		burst = LAB_BURST;
	if (d->n + d->acks <= 1)
		return nl_tbf(nl, index, name, bps, (uint32_t)burst,
			      (uint32_t)limit);
	/*
	 * The bucket over all; under it the classes at twice the link's rate,
	 * which they never reach together, so every class with a frame
	 * waiting may send and htb serves them in turn.
	 */
	err = nl_tbf_over(nl, index, name, bps, (uint32_t)burst);
	if (!err)
		err = nl_htb(nl, index, name, 0, true);
	for (int i = 0; i < d->n && !err; i++) {
		uint16_t minor = (uint16_t)(2 + i);

		err = nl_htb_class(nl, index, name, 0, minor, 2 * bps, 2 * bps,
				   (uint32_t)burst, LAB_QUANTUM);
		if (!err)
			err = nl_bfifo(nl, index, name, minor, (uint32_t)limit);
		if (!err)
			err = nl_classify_dst(nl, index, name, d->a[i], minor);
	}
	return err;
}

/*
 * TCP on the servers' routes, so that the transport realises the twin's
 * model and no clock of the host leaks into a dilated run: the least RTO
 * is the host's 200 ms times N (capped at TCP's own 120 s), no delayed ACKs,
 * and windows that hold a whole message from the first round (the twin
 * has no slow start: a transfer takes its fair share at once).
 */
static struct nl_tcp_metrics tcp_metrics(const struct lab *lab)
{
	double rto = WIRE_RTO_MIN_S * 1e3 * lab->dilation;

	return (struct nl_tcp_metrics){
		.rto_min_ms = (uint32_t)(rto > 120000 ? 120000 : rto),
		.initcwnd = 1024, .initrwnd = 1024, .quickack = true,
	};
}

/* Join port x to port y inside one ROADM, both ways (rewiring them). */
static int xconnect(struct nl *nl, int x, const char *xn, int y,
		    const char *yn, bool replace)
{
	int err = nl_redirect(nl, x, xn, y, yn, replace);

	return err ? err : nl_redirect(nl, y, yn, x, xn, replace);
}

/*
 * The ports lightpath l joins in each ROADM it crosses, from end a: the
 * ROADM, and the two ports' names (ad<l>, f<fibre>w<lambda>) and their
 * line slots (an add/drop port: -1 at end a, -2 at end b).
 */
struct join {
	int roadm;
	char x[16], y[16];
	int xslot, yslot;	/* line slot, or -1 - end for ad<l> */
};

static int lightpath_joins(int words, const struct scenario *sc,
			   const struct lightpath *lp, int l,
			   int (*fn)(void *ctx, const struct join *j),
			   void *ctx)
{
	struct join j = { .roadm = sc->nodes[lp->a].attach, .xslot = -1 };
	int err = 0;

	snprintf(j.x, sizeof(j.x), "ad%d", l);
	for (int i = 0; i < lp->nfib && !err; i++) {
		const struct scn_fibre *f = &sc->fibres[lp->fib[i]];
		int end = f->a == j.roadm ? 0 : 1;

		snprintf(j.y, sizeof(j.y), "f%dw%d", lp->fib[i], lp->lambda);
		j.yslot = line_slot(words, lp->fib[i], lp->lambda, end);
		err = fn(ctx, &j);
		j.roadm = end ? f->a : f->b;
		j.xslot = line_slot(words, lp->fib[i], lp->lambda, 1 - end);
		memcpy(j.x, j.y, sizeof(j.x));
	}
	snprintf(j.y, sizeof(j.y), "ad%d", l);
	j.yslot = -2;
	return err ? err : fn(ctx, &j);
}

struct up_join {
	struct lab *lab;
	int l;
	bool lit;
};

static int port_index(const struct lab *lab, int l, int slot)
{
	return slot >= 0 ? lab->line[slot] : lab->ad[2 * l + (-1 - slot)];
}

/* At `up`: each port's ingress qdisc once; lit lightpaths joined. */
static int up_join(void *ctx, const struct join *j)
{
	struct up_join *u = ctx;
	struct lab *lab = u->lab;
	struct nl *nl = lab->n[j->roadm].nl;
	int x = port_index(lab, u->l, j->xslot);
	int y = port_index(lab, u->l, j->yslot);
	int err = 0;

	if (j->xslot < 0 || !lab->ing[j->xslot])
		err = nl_ingress(nl, x, j->x);
	if (!err && j->xslot >= 0)
		lab->ing[j->xslot] = true;
	if (!err && (j->yslot < 0 || !lab->ing[j->yslot]))
		err = nl_ingress(nl, y, j->y);
	if (!err && j->yslot >= 0)
		lab->ing[j->yslot] = true;
	if (!err && u->lit)
		err = xconnect(nl, x, j->x, y, j->y, false);
	return err;
}

static int endpoint_addrs(void *ctx, const struct ppath *pp,
			  const struct endpoint *ep)
{
	struct lab *lab = ctx;
	int err = nl_addr(lab->n[pp->from].nl, 2, LAB_SERVER_IF, ep->src, 32);

	return err ? err : nl_addr(lab->n[pp->to].nl, 2, LAB_SERVER_IF,
				   ep->dst, 32);
}

static int bg_addr(struct lab *lab, int node, uint32_t addr)
{
	bool srv = lab->p->sc->nodes[node].kind == NODE_SERVER;

	return nl_addr(lab->n[node].nl, srv ? 2 : 1,
		       srv ? LAB_SERVER_IF : "lo", addr, 32);
}

static int configure(struct lab *lab)
{
	const struct plan *p = lab->p;
	const struct scenario *sc = p->sc;
	const struct addressing *ad = lab->a;
	struct dsts *d = link_dsts(lab);
	char n1[16];
	int err = d ? 0 : -errno;

	for (int i = 0; i < lab->npeers && !err; i++)
		err = nl_link_up(lab->n[lab->peers[i].node].nl,
				 lab->peers[i].index, lab->peers[i].name);
	/* servers and access links */
	for (int s = 0; s < sc->nnodes && !err; s++) {
		struct nl *srv = lab->n[s].nl;
		int r = sc->nodes[s].attach;
		uint64_t bps = rate_bps(lab, sc->nodes[s].access_gbps);
		struct nl_tcp_metrics tm = tcp_metrics(lab);

		if (sc->nodes[s].kind != NODE_SERVER)
			continue;
		lab_access_if(s, n1, sizeof(n1));
		err = nl_addr(srv, 2, LAB_SERVER_IF, ad->access[s] + 1, 31);
		if (!err)
			err = nl_route(srv, 0, 0, ad->access[s], 2, LAB_SERVER_IF, &tm);
		if (!err)
			err = shape(lab, srv, 2, LAB_SERVER_IF, bps, &d[2 * s]);
		if (!err)
			err = nl_addr(lab->n[r].nl, lab->acc[s], n1,
				      ad->access[s], 31);
		if (!err)
			err = shape(lab, lab->n[r].nl, lab->acc[s], n1, bps,
				    &d[2 * s + 1]);
	}
	/* lightpaths: router ends addressed and shaped, ROADMs joined */
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];
		uint64_t bps = rate_bps(lab, lp->cap_gbps);

		lab_lightpath_if(l, n1, sizeof(n1));
		for (int end = 0; end < 2 && !err; end++) {
			struct nl *r = lab->n[end ? lp->b : lp->a].nl;

			err = nl_addr(r, lab->lp[2 * l + end], n1,
				      ad->lightpath[l] + (uint32_t)end, 31);
			if (!err)
				err = shape(lab, r, lab->lp[2 * l + end], n1,
					    bps,
					    &d[2 * sc->nnodes + 2 * l + end]);
		}
		/* the ROADMs: ad<l> -> f..w.. -> ... -> ad<l>, if lit */
		if (!err) {
			struct up_join u = { lab, l, lab_lit(lab, 0, l) };

			err = lightpath_joins(lab->words, sc, lp, l, up_join,
					      &u);
		}
	}
	/* transfer endpoints on the servers */
	if (!err)
		err = each_transfer(lab, endpoint_addrs, lab);
	/* background traffic's: on a server's interface, a router's lo */
	for (int i = 0; i < p->nbg && !err; i++) {
		const struct scn_bg *bg = p->bg[i].bg;

		err = bg_addr(lab, bg->from, ad->bg[i].src);
		if (!err)
			err = bg_addr(lab, bg->to, ad->bg[i].dst);
	}
	/* routes of every transfer */
	for (int i = 0; i < ad->nroutes && !err; i++) {
		const struct route *rt = &ad->routes[i];
		int link = rt->link, idx;

		if (link < 2 * sc->nnodes) {
			idx = lab->acc[link / 2];
			lab_access_if(link / 2, n1, sizeof(n1));
		} else {
			int l = (link - 2 * sc->nnodes) / 2;

			idx = lab->lp[2 * l + (p->net->lp[l].a == rt->node ? 0 : 1)];
			lab_lightpath_if(l, n1, sizeof(n1));
		}
		err = nl_route(lab->n[rt->node].nl, rt->dst, 32, rt->via, idx,
			       n1, NULL);
	}
	dsts_free(d, d ? plan_nlinks(p) : 0);
	if (err == -E2BIG)
		return fail(lab, err, "more than %d transfers share one link",
			    LAB_CLASSES_MAX);
	if (err)
		return fail(lab, err, "cannot configure the links: %s",
			    strerror(-err));
	return commit_all(lab);
}

/*
 * The lightpaths of a followed timeline that its first epoch does not
 * light: down at both routers (their ROADM ports stay unjoined until an
 * epoch lights them, see lab_epoch).
 */
static int darken(struct lab *lab)
{
	const struct plan *p = lab->p;
	char ifn[16];
	int err = 0;

	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];

		if (lab_lit(lab, 0, l))
			continue;
		lab_lightpath_if(l, ifn, sizeof(ifn));
		err = nl_link_set(lab->n[lp->a].nl, lab->lp[2 * l], ifn, false);
		if (!err)
			err = nl_link_set(lab->n[lp->b].nl, lab->lp[2 * l + 1],
					  ifn, false);
	}
	if (err)
		return fail(lab, err, "out of memory");
	return commit_all(lab);
}

/* ---- impairments ---------------------------------------------------- */

struct delay_record {
	struct lab *lab;
	const char *name, *exe;
};

/* The supervisor is in the state file before it may start anything. */
static int record_delay(pid_t pid, unsigned long long start, void *ctx)
{
	struct delay_record *dr = ctx;

	return record(dr->lab, "pid %d %llu %s %s", (int)pid, start, dr->name,
		      dr->exe);
}

static int hop(struct lab *lab, struct impair *im, int node, bool in,
	       const char *ifn, int num, double km, double gbps, double loss)
{
	struct impair_hop h = {
		.netns = lab->n[node].ns, .ifname = ifn, .in = in,
		.num = (uint16_t)num,
		.delay_s = km * FIBRE_S_PER_KM * lab->dilation,
		.loss = loss, .rate_bps = (double)rate_bps(lab, gbps),
	};

	return impair_add(im, &h, lab->err, lab->errlen);
}

/*
 * Impairments on forwarding hops only: each router impairs what it sends
 * into a lightpath (the lightpath's length and loss), and what it sends to
 * or receives from a server (the access link's length, when it has one).
 */
static int start_impairments(struct lab *lab, unsigned mask)
{
	const struct plan *p = lab->p;
	const struct scenario *sc = p->sc;
	struct impair *im = impair_new(mask);
	struct delay_record dr;
	struct impair_env env;
	char name[16], ifn[16], exe[PATH_MAX];
	int err = 0;

	if (!im)
		return fail(lab, -ENOMEM, "out of memory");
	for (int l = 0; l < p->net->nlp && !err; l++) {
		const struct lightpath *lp = &p->net->lp[l];
		double loss = net_lightpath_loss(sc, lp);

		lab_lightpath_if(l, ifn, sizeof(ifn));
		for (int end = 0; end < 2 && !err; end++)
			err = hop(lab, im, end ? lp->b : lp->a, false, ifn,
				  lab->lp[2 * l + end], lp->km, lp->cap_gbps,
				  loss);
	}
	for (int s = 0; s < sc->nnodes && !err; s++) {
		const struct scn_node *n = &sc->nodes[s];

		if (n->kind != NODE_SERVER)
			continue;
		lab_access_if(s, ifn, sizeof(ifn));
		err = hop(lab, im, n->attach, false, ifn, lab->acc[s],
			  n->access_km, n->access_gbps, 0);
		if (!err)
			err = hop(lab, im, n->attach, true, ifn,
				  lab->acc[s] + 32768, n->access_km,
				  n->access_gbps, 0);
	}
	if (!err && !proc_exe(getpid(), exe, sizeof(exe)))
		err = fail(lab, -EIO, "cannot start the delay line: cannot "
			   "read this program's executable");
	if (!err) {
		lab_delay_name(lab->prefix, name, sizeof(name));
		dr = (struct delay_record){ lab, name, exe };
		env = (struct impair_env){
			.record = record_delay, .ctx = &dr, .proc_name = name,
			/* without its counters the delay line still delays */
			.live = (mask & IMPAIR_DELAY) ?
				live_create(lab->prefix) : NULL,
		};
		err = impair_start(im, &env, lab->err, lab->errlen);
		lab_delay_live_close(env.live);	/* the supervisor maps its own */
	}
	impair_free(im);
	return err;
}

int lab_up(const struct plan *p, const struct addressing *a,
	   const struct lab_opts *o, struct lab **out, char *errbuf,
	   size_t errlen)
{
	const struct scenario *sc = p->sc;
	struct lab *lab;
	int err, maxw;

	*out = NULL;
	if (!lab_prefix_ok(o->prefix)) {
		snprintf(errbuf, errlen, "bad prefix '%s': use 1-%d characters "
			 "of [a-z0-9] starting with a letter", o->prefix,
			 LAB_PREFIX_MAX);
		return -EINVAL;
	}
	if (geteuid() != 0) {
		snprintf(errbuf, errlen, "building an emulation needs root "
			 "(network namespaces, veth, qdiscs)");
		return -EPERM;
	}
	if (lab_exists(o->prefix)) {
		snprintf(errbuf, errlen, "prefix '%s' is in use: run "
			 "'twinlab down --prefix %s' (or 'clean') first, or "
			 "choose another prefix", o->prefix, o->prefix);
		return -EEXIST;
	}
	lab = calloc(1, sizeof(*lab));
	if (!lab)
		return -ENOMEM;
	snprintf(lab->prefix, sizeof(lab->prefix), "%s", o->prefix);
	lab->dilation = o->dilation > 0 ? o->dilation : 1;
	if (!(lab->dilation >= 1 && lab->dilation <= LAB_DILATION_MAX)) {
		snprintf(errbuf, errlen, "dilation %g is out of range [1, %g]",
			 o->dilation, LAB_DILATION_MAX);
		free(lab);
		return -EINVAL;
	}
	if (o->set && o->set->plan[0] != p) {
		snprintf(errbuf, errlen, "the plan to build is not the first "
			 "epoch's of the timeline to follow");
		free(lab);
		return -EINVAL;
	}
	lab->p = p;
	lab->a = a;
	lab->set = o->set;
	lab->err = errbuf;
	lab->errlen = errlen;
	maxw = max_wavelengths(sc);
	lab->words = maxw;
	lab->n = calloc((size_t)sc->nnodes + 1, sizeof(*lab->n));
	lab->acc = calloc((size_t)sc->nnodes + 1, sizeof(*lab->acc));
	lab->lp = calloc((size_t)2 * p->net->nlp + 1, sizeof(*lab->lp));
	lab->ad = calloc((size_t)2 * p->net->nlp + 1, sizeof(*lab->ad));
	lab->line = calloc((size_t)sc->nfibres * maxw * 2 + 1,
			   sizeof(*lab->line));
	lab->ing = calloc((size_t)sc->nfibres * maxw * 2 + 1,
			  sizeof(*lab->ing));
	if (!lab->n || !lab->acc || !lab->lp || !lab->ad || !lab->line ||
	    !lab->ing) {
		free_lab(lab);
		return -ENOMEM;
	}
	for (int i = 0; i < sc->nnodes; i++)
		lab->n[i].fd = -1;
	err = open_state(lab, o);
	if (err) {
		free_lab(lab);
		return err;
	}
	err = make_namespaces(lab);
	if (!err)
		err = make_links(lab);
	if (!err)
		err = configure(lab);
	if (!err)
		err = darken(lab);
	if (!err)
		err = start_impairments(lab, o->delay ? IMPAIR_ALL :
					     IMPAIR_ALL & ~IMPAIR_DELAY);
	if (err) {
		free_lab(lab);
		lab_down(o->prefix, NULL, NULL);
		return err;
	}
	*out = lab;
	return 0;
}

struct down_ctx {
	void (*report)(const char *what, void *arg);
	void *arg;
	int removed;
	int first_err;
};

static void say(struct down_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct down_ctx *c, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	c->removed++;
	if (!c->report)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->report(buf, c->arg);
}

static void cg_said(const char *what, void *arg)
{
	say(arg, "%s", what);
}

/* What deleting namespace `name` came to (err from netns_del). */
static void del_said(struct down_ctx *c, const char *name, int err)
{
	if (err && err != -ENOENT) {
		if (!c->first_err)
			c->first_err = err;
	} else if (!err) {
		say(c, "netns %s", name);
	}
}

static void del_ns(const char *name, void *arg)
{
	del_said(arg, name, netns_del(name));
}

/*
 * The recorded namespaces, deleted by LAB_DEL_THREADS threads side by
 * side: each unmount of a namespace's file waits for an RCU grace period
 * after the kernel's mount lock is released, and unmounts made side by
 * side wait together (2,000 one after another spent 1.6 s in unmount).
 */
#define LAB_DEL_THREADS 8

struct ns_deleter {
	char (*name)[64];
	int n, first, *err;
};

static void *del_some(void *arg)
{
	struct ns_deleter *d = arg;

	for (int i = d->first; i < d->n; i += LAB_DEL_THREADS)
		d->err[i] = netns_del(d->name[i]);
	return NULL;
}

static void del_all(char (*name)[64], int n, struct down_ctx *c)
{
	struct ns_deleter d[LAB_DEL_THREADS];
	int *err = calloc((size_t)n + 1, sizeof(*err));

	if (!err) {
		for (int i = 0; i < n; i++)
			del_ns(name[i], c);
		return;
	}
	for (int t = 0; t < LAB_DEL_THREADS; t++)
		d[t] = (struct ns_deleter){ name, n, t, err };
	side_by_side(del_some, d, sizeof(d[0]),
		     n < LAB_DEL_THREADS ? n : LAB_DEL_THREADS);
	for (int i = 0; i < n; i++)
		del_said(c, name[i], err[i]);
	free(err);
}

/* Wait (up to 2 s) for a process we signalled to be gone. */
static void wait_gone(pid_t pid, unsigned long long start)
{
	for (int i = 0; i < 200 && proc_start(pid) == start; i++)
		usleep(10 * 1000);
}

/*
 * Whether p is still the process the state recorded (the delay line's
 * supervisor, a traffic generator): the same start time, the name it gave
 * itself (one of the prefix's, as parsing checked) and its executable.
 */
static bool still_ours(const struct lab_state_pid *p)
{
	char comm[32], exe[PATH_MAX];

	return proc_start(p->pid) == p->start &&
	       proc_comm(p->pid, comm, sizeof(comm)) &&
	       !strcmp(comm, p->name) &&
	       proc_exe(p->pid, exe, sizeof(exe)) && !strcmp(exe, p->exe);
}

static bool is_delay(const char *prefix, const struct lab_state_pid *p)
{
	char want[16];

	lab_delay_name(prefix, want, sizeof(want));
	return !strcmp(p->name, want);
}

struct traffic_record {
	const char *prefix, *name;
};

static int record_traffic(pid_t pid, unsigned long long start, void *ctx)
{
	const struct traffic_record *tr = ctx;

	return lab_record_pid(tr->prefix, pid, start, tr->name);
}

/* The longest path background flow i takes in any plan played, in km;
 * -1 if none routes it. */
static double traffic_km(const struct plan *p, const struct lpset *set,
			 int i)
{
	double km = -1;

	for (int k = 0; k < lpset_nplans(set); k++) {
		const struct bg_flow *b = &lpset_plan_or(p, set, k)->bg[i];

		if (b->routed)
			km = fmax(km, b->path.km);
	}
	return km;
}

bool lab_traffic_flows(const struct plan *p, const struct lpset *set, int i)
{
	return traffic_km(p, set, i) >= 0;
}

int lab_traffic_start(const struct plan *p, const struct lpset *set,
		      const struct addressing *a, const char *prefix,
		      double dilation, struct tg **out, char *err, size_t len)
{
	const struct scenario *sc = p->sc;
	struct tg_flow *f = calloc((size_t)p->nbg + 1, sizeof(*f));
	struct traffic_record tr;
	char name[16];
	int n = 0, e;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	for (int i = 0; i < p->nbg; i++) {
		const struct scn_bg *bg = p->bg[i].bg;
		const struct scn_event *ev = &sc->events[bg->event];
		double km = traffic_km(p, set, i);

		if (km < 0)
			continue;
		lab_ns_name(prefix, sc->nodes[bg->from].name, f[n].src_ns,
			    sizeof(f[n].src_ns));
		lab_ns_name(prefix, sc->nodes[bg->to].name, f[n].dst_ns,
			    sizeof(f[n].dst_ns));
		f[n].src = a->bg[i].src;
		f[n].dst = a->bg[i].dst;
		f[n].rate_bps = emulated_bps(sc, bg->gbps, dilation);
		f[n].start_s = ev->at_s * dilation;
		f[n].stop_s = (ev->at_s + ev->for_s) * dilation;
		f[n].linger_s = (net_in_flight_s(km) + 0.002) * dilation;
		n++;
	}
	if (!n) {
		free(f);
		return 0;
	}
	lab_traffic_name(prefix, name, sizeof(name));
	tr = (struct traffic_record){ prefix, name };
	e = tg_start(f, n, name, record_traffic, &tr, out, err, len);
	free(f);
	return e;
}

int lab_record_pid(const char *prefix, pid_t pid, unsigned long long start,
		   const char *name)
{
	char path[256], exe[PATH_MAX], line[PATH_MAX + 128];
	int fd, len, err = 0;

	if (!proc_exe(pid, exe, sizeof(exe)))
		return -ESRCH;
	len = snprintf(line, sizeof(line), "pid %d %llu %s %s\n", (int)pid,
		       start, name, exe);
	if (len < 0 || (size_t)len >= sizeof(line))
		return -ENAMETOOLONG;
	state_path(prefix, path, sizeof(path));
	fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)len) != len)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static int down(const char *prefix, bool sweep,
		void (*report)(const char *what, void *arg), void *arg);

int lab_down(const char *prefix, void (*report)(const char *what, void *arg),
	     void *arg)
{
	return down(prefix, true, report, arg);
}

int lab_down_recorded(const char *prefix,
		      void (*report)(const char *what, void *arg), void *arg)
{
	return down(prefix, false, report, arg);
}

static int down(const char *prefix, bool sweep,
		void (*report)(const char *what, void *arg), void *arg)
{
	struct down_ctx c = { report, arg, 0, 0 };
	char path[256], dir[256];
	struct lab_state st;
	struct stat sb;
	bool had_state, valid;
	int n;

	if (!lab_prefix_ok(prefix))
		return -EINVAL;
	state_path(prefix, path, sizeof(path));
	had_state = lstat(path, &sb) == 0;
	/*
	 * The state file is input like any other (labstate.h): only entries
	 * this prefix could have written are acted on, and a process only if
	 * it still is the one recorded. Processes first: they hold sockets
	 * in the namespaces.
	 */
	valid = lab_state_read(prefix, &st) == 0;
	for (int i = 0; valid && i < st.npids; i++) {
		const struct lab_state_pid *p = &st.pids[i];

		if (still_ours(p) && kill(p->pid, SIGTERM) == 0) {
			wait_gone(p->pid, p->start);
			/* ours (we built it): no zombie left */
			waitpid(p->pid, NULL, WNOHANG);
			say(&c, "%s process %d", is_delay(prefix, p) ?
			    "delay line" : "traffic generator", (int)p->pid);
		}
	}
	if (valid)
		del_all(st.netns, st.nnetns, &c);
	lab_state_release(&st);
	/*
	 * What a crash may have left unrecorded (made, then killed before
	 * the state said so): only when asked (clean), as a namespace that
	 * merely carries the prefix's name is not proved ours.
	 */
	n = sweep ? netns_each(prefix, del_ns, &c) : 0;
	if (n < 0 && !c.first_err)
		c.first_err = n;
	/* the workers' cgroups (and any process still in one) */
	n = cg_remove_prefix(prefix, cg_said, &c);
	if (n < 0 && !c.first_err)
		c.first_err = n;
	/* the state file goes even if it was not valid: it is the prefix's */
	if (had_state) {
		unlink(path);
		say(&c, "state %s", path);
	}
	live_path(prefix, path, sizeof(path));
	unlink(path);
	snprintf(dir, sizeof(dir), LAB_STATE_DIR "/%s", prefix);
	rmdir(dir);
	return c.first_err ? c.first_err : c.removed;
}

int lab_delay_pid(const char *prefix, pid_t *pid)
{
	struct lab_state st;
	int err = lab_state_read(prefix, &st);

	if (err)
		return err == -EINVAL ? -ENOENT : err;
	err = -ENOENT;
	for (int i = 0; err && i < st.npids; i++)
		if (is_delay(prefix, &st.pids[i]) && still_ours(&st.pids[i])) {
			*pid = st.pids[i].pid;
			err = 0;
		}
	lab_state_release(&st);
	return err;
}

pid_t lab_delay_line(pid_t sup)
{
	return proc_child(sup);
}

int lab_state_get(const char *prefix, const char *key, char *buf, size_t len)
{
	struct lab_state st;
	int err = lab_state_read(prefix, &st);

	if (err)
		return err;
	err = 0;
	if (!strcmp(key, "scenario") && st.scenario[0])
		snprintf(buf, len, "%s", st.scenario);
	else if (!strcmp(key, "scheduler") && st.scheduler[0])
		snprintf(buf, len, "%s", st.scheduler);
	else if (!strcmp(key, "dilation") && st.dilation >= 1)
		snprintf(buf, len, "%.17g", st.dilation);
	else
		err = -ENOENT;
	lab_state_release(&st);
	return err;
}

/* In netns ns, every interface named f<fibre>w<lambda> taken down or up. */
static int segments_set(const char *ns, int fibre, bool up, int *count,
			char *err, size_t len)
{
	struct if_nameindex *ifs;
	struct nl *nl;
	char want[16];
	int saved, e, n = 0;

	e = netns_enter(ns, &saved);
	if (e) {
		snprintf(err, len, "cannot enter netns '%s': %s", ns,
			 strerror(-e));
		return e;
	}
	ifs = if_nameindex();
	netns_leave(saved);
	if (!ifs) {
		e = -errno;
		snprintf(err, len, "cannot list the interfaces of netns '%s': "
			 "%s", ns, strerror(errno));
		return e;
	}
	nl = nl_open(ns);
	if (!nl) {
		e = -errno;
		snprintf(err, len, "cannot open rtnetlink in netns '%s': %s",
			 ns, strerror(errno));
		if_freenameindex(ifs);
		return e;
	}
	snprintf(want, sizeof(want), "f%dw", fibre);
	for (struct if_nameindex *x = ifs; x->if_index && !e; x++) {
		int lambda, end = 0;

		/* exactly f<fibre>w<lambda>: not f<fibre>1w.. */
		if (strncmp(x->if_name, want, strlen(want)) ||
		    sscanf(x->if_name + strlen(want), "%d%n", &lambda,
			   &end) != 1 || x->if_name[strlen(want) + end])
			continue;
		e = nl_link_set(nl, (int)x->if_index, x->if_name, up);
		n++;
	}
	if (!e)
		e = nl_commit(nl);
	if (e)
		snprintf(err, len, "%s", nl_error(nl));
	nl_close(nl);
	if_freenameindex(ifs);
	*count += n;
	return e;
}

int lab_fibre_set(const char *prefix, const struct scenario *sc, int fibre,
		  bool up, int *segments, char *err, size_t len)
{
	const char *a, *b;
	char ns[2][80];
	int e = 0;

	*segments = 0;
	if (!lab_prefix_ok(prefix) || fibre < 0 || fibre >= sc->nfibres) {
		snprintf(err, len, "bad prefix or fibre");
		return -EINVAL;
	}
	if (!lab_exists(prefix)) {
		snprintf(err, len, "prefix '%s' is not up", prefix);
		return -ENOENT;
	}
	a = sc->nodes[sc->fibres[fibre].a].name;
	b = sc->nodes[sc->fibres[fibre].b].name;
	lab_ns_name(prefix, a, ns[0], sizeof(ns[0]));
	lab_ns_name(prefix, b, ns[1], sizeof(ns[1]));
	for (int i = 0; i < 2 && !e; i++)
		e = segments_set(ns[i], fibre, up, segments, err, len);
	if (!e && !*segments) {
		snprintf(err, len, "no wavelength is lit on the fibre %s-%s in "
			 "prefix '%s': nothing to %s", a, b, prefix,
			 up ? "repair" : "cut");
		return -ENOENT;
	}
	return e;
}

int lab_xconnect(const char *prefix, const char *roadm, const char *in_port,
		 const char *out_port, char *errbuf, size_t len)
{
	char ns[80];
	struct nl *nl;
	int saved, in, out, err;

	lab_ns_name(prefix, roadm, ns, sizeof(ns));
	err = netns_enter(ns, &saved);
	if (err) {
		snprintf(errbuf, len, "cannot enter netns '%s': %s", ns,
			 strerror(-err));
		return err;
	}
	in = (int)if_nametoindex(in_port);
	out = (int)if_nametoindex(out_port);
	netns_leave(saved);
	if (!in || !out) {
		snprintf(errbuf, len, "no port '%s' in netns '%s'",
			 in ? out_port : in_port, ns);
		return -ENODEV;
	}
	nl = nl_open(ns);
	if (!nl) {
		err = -errno;
		snprintf(errbuf, len, "cannot open rtnetlink in netns '%s': %s",
			 ns, strerror(errno));
		return err;
	}
	err = nl_redirect(nl, in, in_port, out, out_port, true);
	if (!err)
		err = nl_commit(nl);
	if (err)
		snprintf(errbuf, len, "%s", nl_error(nl));
	nl_close(nl);
	return err;
}

/* ---- following a timeline live (lab_epoch) -------------------------- */

/* A running emulation's namespaces, each opened when first needed. */
struct live {
	const char *prefix;
	const struct scenario *sc;
	struct nl **nl;			/* per node */
	struct if_nameindex **ifs;	/* per node: its interfaces */
	char *err;
	size_t len;
};

static struct nl *live_nl(struct live *lv, int node, int *e)
{
	char ns[80];

	if (lv->nl[node])
		return lv->nl[node];
	lab_ns_name(lv->prefix, lv->sc->nodes[node].name, ns, sizeof(ns));
	lv->nl[node] = nl_open(ns);
	if (!lv->nl[node]) {
		*e = -errno;
		snprintf(lv->err, lv->len, "cannot open rtnetlink in netns "
			 "'%s': %s", ns, strerror(errno));
		return NULL;
	}
	nl_label(lv->nl[node], ns);
	return lv->nl[node];
}

/* The index of interface `name` of node's namespace; 0 with err set. */
static int live_index(struct live *lv, int node, const char *name)
{
	char ns[80];
	int saved, e;

	lab_ns_name(lv->prefix, lv->sc->nodes[node].name, ns, sizeof(ns));
	if (!lv->ifs[node]) {
		e = netns_enter(ns, &saved);
		if (e) {
			snprintf(lv->err, lv->len, "cannot enter netns '%s': "
				 "%s", ns, strerror(-e));
			return 0;
		}
		lv->ifs[node] = if_nameindex();
		netns_leave(saved);
		if (!lv->ifs[node]) {
			snprintf(lv->err, lv->len, "cannot list the "
				 "interfaces of netns '%s': %s", ns,
				 strerror(errno));
			return 0;
		}
	}
	for (struct if_nameindex *x = lv->ifs[node]; x->if_index; x++)
		if (!strcmp(x->if_name, name))
			return (int)x->if_index;
	snprintf(lv->err, lv->len, "no interface '%s' in netns '%s'", name,
		 ns);
	return 0;
}

static int live_commit(struct live *lv)
{
	for (int i = 0; i < lv->sc->nnodes; i++) {
		int e = lv->nl[i] ? nl_commit(lv->nl[i]) : 0;

		if (e) {
			snprintf(lv->err, lv->len, "%s", nl_error(lv->nl[i]));
			return e;
		}
	}
	return 0;
}

static void live_release(struct live *lv)
{
	for (int i = 0; lv->nl && i < lv->sc->nnodes; i++) {
		nl_close(lv->nl[i]);
		if (lv->ifs[i])
			if_freenameindex(lv->ifs[i]);
	}
	free(lv->nl);
	free(lv->ifs);
}

/* A ROADM join of a lightpath coming alight: its ports rewired to it. */
static int live_join(void *ctx, const struct join *j)
{
	struct live *lv = ctx;
	int e = -ENODEV, x, y;
	struct nl *nl;

	x = live_index(lv, j->roadm, j->x);
	y = x ? live_index(lv, j->roadm, j->y) : 0;
	if (!y)
		return e;
	nl = live_nl(lv, j->roadm, &e);
	return nl ? xconnect(nl, x, j->x, y, j->y, true) : e;
}

/* Lightpath l of p up (or down) at both its routers. */
static int live_ends(struct live *lv, const struct plan *p, int l, bool up)
{
	const struct lightpath *lp = &p->net->lp[l];
	char ifn[16];
	int e = 0;

	lab_lightpath_if(l, ifn, sizeof(ifn));
	for (int end = 0; end < 2 && !e; end++) {
		int node = end ? lp->b : lp->a;
		int idx = live_index(lv, node, ifn);
		struct nl *nl = idx ? live_nl(lv, node, &e) : NULL;

		if (!idx)
			return -ENODEV;
		e = nl ? nl_link_set(nl, idx, ifn, up) : e;
	}
	return e;
}

static int route_cmp(const void *x, const void *y)
{
	const struct route *a = x, *b = y;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->dst < b->dst ? -1 : a->dst > b->dst;
}

/* Route r of p replaced (del false) or removed at its router. */
static int live_route(struct live *lv, const struct plan *p,
		      const struct route *r, bool del)
{
	char ns[80], ifn[16];
	struct nl *nl;
	int idx, e = -ENODEV;

	lab_link_end(p, lv->prefix, r->link, ns, ifn);
	idx = live_index(lv, r->node, ifn);
	nl = idx ? live_nl(lv, r->node, &e) : NULL;
	if (!nl)
		return e;
	return del ? nl_route_del(nl, r->dst, 32, r->via, idx, ifn) :
		     nl_route_replace(nl, r->dst, 32, r->via, idx, ifn);
}

/* Whether `link` is a lightpath epoch e of set does not light. */
static bool link_dark(const struct lpset *set, int e, int link)
{
	int n2 = 2 * set->plan[e]->sc->nnodes;

	return link >= n2 && !set->lit[e][(link - n2) / 2];
}

/*
 * The routes of `from` and `to`, both sorted by router and destination,
 * walked together: what `to` routes otherwise is replaced, what it no
 * longer routes at a router is removed there. A route over a lightpath
 * `from` did not light went with it (the kernel removes the routes of an
 * interface that goes down): it is made again where `to` has it, and not
 * removed twice.
 */
static int live_routes(struct live *lv, const struct lpset *set, int ef,
		       int et, struct addressing *from,
		       struct addressing *to, int *changes)
{
	const struct plan *p = set->plan[et];
	int i = 0, j = 0, e = 0;

	qsort(from->routes, (size_t)from->nroutes, sizeof(*from->routes),
	      route_cmp);
	qsort(to->routes, (size_t)to->nroutes, sizeof(*to->routes),
	      route_cmp);
	while ((i < from->nroutes || j < to->nroutes) && !e) {
		const struct route *a = i < from->nroutes ? &from->routes[i] :
							      NULL;
		const struct route *b = j < to->nroutes ? &to->routes[j] : NULL;
		int c = !a ? 1 : !b ? -1 : route_cmp(a, b);

		if (c < 0 && link_dark(set, ef, a->link)) {
			i++;
			continue;
		} else if (c < 0) {
			e = live_route(lv, p, a, true);
			i++;
		} else if (c > 0 || a->via != b->via || a->link != b->link ||
			   link_dark(set, ef, b->link)) {
			e = live_route(lv, p, b, false);
			i += c == 0;
			j++;
		} else {
			i++;
			j++;
			continue;
		}
		++*changes;
	}
	return e;
}

int lab_epoch(const char *prefix, const struct lpset *set, int from, int to,
	      int *changes, char *err, size_t len)
{
	const struct plan *p;
	struct addressing *af = NULL, *at = NULL;
	struct live lv = { prefix, NULL, NULL, NULL, err, len };
	int words, e = 0;

	*changes = 0;
	if (!lab_prefix_ok(prefix) || from < 0 || to < 0 ||
	    from >= set->nepochs || to >= set->nepochs) {
		snprintf(err, len, "bad prefix or epoch");
		return -EINVAL;
	}
	if (!lab_exists(prefix)) {
		snprintf(err, len, "prefix '%s' is not up", prefix);
		return -ENOENT;
	}
	p = set->plan[to];
	lv.sc = p->sc;
	words = max_wavelengths(lv.sc);
	lv.nl = calloc((size_t)lv.sc->nnodes + 1, sizeof(*lv.nl));
	lv.ifs = calloc((size_t)lv.sc->nnodes + 1, sizeof(*lv.ifs));
	af = addressing_new(set->plan[from]);
	at = addressing_new(p);
	if (!lv.nl || !lv.ifs || !af || !at) {
		snprintf(err, len, "out of memory");
		e = -ENOMEM;
		goto out;
	}
	/* what comes alight: joined in its ROADMs, then up at its routers */
	for (int l = 0; l < p->net->nlp && !e; l++) {
		if (!set->lit[to][l] || set->lit[from][l])
			continue;
		e = lightpath_joins(words, lv.sc, &p->net->lp[l], l, live_join,
				    &lv);
		if (!e)
			e = live_ends(&lv, p, l, true);
		++*changes;
	}
	if (!e)
		e = live_commit(&lv);
	/* the routes, once their next hops are there */
	if (!e)
		e = live_routes(&lv, set, from, to, af, at, changes);
	if (!e)
		e = live_commit(&lv);
	/* what goes dark, once nothing is routed over it */
	for (int l = 0; l < p->net->nlp && !e; l++) {
		if (set->lit[to][l] || !set->lit[from][l])
			continue;
		e = live_ends(&lv, p, l, false);
		++*changes;
	}
	if (!e)
		e = live_commit(&lv);
out:
	live_release(&lv);
	addressing_free(af);
	addressing_free(at);
	return e;
}
