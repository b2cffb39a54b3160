// SPDX-License-Identifier: MIT
#include "mnrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "bench.h"
#include "emu/netns.h"
#include "proc.h"
#include "tests/lib/nettest.h"

#define MN_TIMEOUT_S 900.0	/* for one build or one stop */

struct line_reader {
	int fd;
	char buf[1 << 16];
	size_t len;
};

/* Next line from r (without '\n') into out, waiting up to timeout_s. */
static int read_line(struct line_reader *r, char *out, size_t size,
		     double timeout_s)
{
	double deadline = now_s() + timeout_s;

	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - r->buf);

			snprintf(out, size, "%.*s", (int)l, r->buf);
			memmove(r->buf, nl + 1, r->len - l - 1);
			r->len -= l + 1;
			return 0;
		}
		if (bench_stop)
			return -EINTR;
		if (now_s() > deadline)
			return -ETIMEDOUT;
		if (r->len == sizeof(r->buf))
			return -E2BIG;
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);
		if (n == 0)
			return -EPIPE;	/* Python is gone */
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			r->len += (size_t)n;
	}
}

static double num(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v)
						     : -1;
}

static struct json_object *event(const char *line, const char *want)
{
	struct json_object *o = json_tokener_parse(line), *ev;

	if (o && json_object_object_get_ex(o, "event", &ev) &&
	    !strcmp(json_object_get_string(ev), want))
		return o;
	json_object_put(o);
	return NULL;
}

/* Wait up to 5 s for our children to exit; end the rest by PID. */
static int settle_children(void)
{
	for (int i = 0; i < 50; i++) {
		pid_t pid = waitpid(-1, NULL, WNOHANG);

		if (pid < 0 && errno == ECHILD)
			return 0;
		if (pid <= 0)
			usleep(100 * 1000);
	}
	return proc_end_children(0);
}

/* Census and watchers over the hosts' namespaces (by their shells' PIDs). */
static int attach(struct json_object *up, int nsfd, struct watch *w,
		  struct census *c)
{
	struct json_object *hosts;
	char path[64], label[32];
	int err = 0;

	if (!json_object_object_get_ex(up, "hosts", &hosts))
		return -EPROTO;
	for (size_t i = 0; !err && i < json_object_array_length(hosts); i++) {
		struct json_object *h = json_object_array_get_idx(hosts, i);
		int pid = json_object_get_int(h), fd;

		snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		snprintf(label, sizeof(label), "h%zu", i + 1);
		if (c)
			err = census_ns(c, fd, label);
		if (!err)
			err = watch_add(w, fd, false);
		close(fd);	/* it would keep the namespace alive */
	}
	if (!err && c)
		err = census_ns(c, nsfd, "mn");
	if (!err)
		err = watch_add(w, nsfd, false);
	return err;
}

int mn_run(const struct mn_opts *o, const char *ns, int k, int n,
	   struct watch *w, struct census *c, struct mn_result *r, char *err,
	   size_t len)
{
	char ks[16], hs[16], line[1 << 16];
	char *add[] = { (char *)o->ip, "netns", "add", (char *)ns, NULL };
	char *argv[] = { (char *)o->python, "-u", (char *)o->script, ks, hs,
			 NULL };
	struct line_reader rd = { .fd = -1 };
	struct json_object *up = NULL, *down = NULL, *hosts;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, nsfd = -1, e, st;
	bool ns_made = false, armed = false;
	struct watch_times wt;
	double t_stop0 = 0;
	pid_t py = -1;

	memset(r, 0, sizeof(*r));
	snprintf(ks, sizeof(ks), "%d", k);
	snprintf(hs, sizeof(hs), "%d", n);
	e = proc_run(add);
	if (e) {
		snprintf(err, len, "cannot create netns '%s' (ip: %d)", ns, e);
		return e < 0 ? e : -EIO;
	}
	ns_made = true;
	nsfd = netns_open(ns);
	if (nsfd < 0 || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		e = nsfd < 0 ? nsfd : -errno;
		snprintf(err, len, "cannot prepare Mininet: %s", strerror(-e));
		goto fail;
	}
	{
		struct proc_io io = { in[0], out[1], nsfd };

		py = proc_spawn(argv, &io);
	}
	close(in[0]);
	close(out[1]);
	in[0] = out[1] = -1;
	if (py < 0) {
		e = (int)py;
		snprintf(err, len, "cannot run '%s': %s", o->python,
			 strerror(-e));
		goto fail;
	}
	bench_child = py;
	rd.fd = out[0];
	e = read_line(&rd, line, sizeof(line), MN_TIMEOUT_S);
	up = e ? NULL : event(line, "up");
	if (!up) {
		snprintf(err, len, "Mininet did not come up (k=%d): %s", k,
			 e ? strerror(-e) : line);
		e = e ? e : -EPROTO;
		goto fail;
	}
	r->build = num(up, "t_built") - num(up, "t0");
	r->start = num(up, "t_started") - num(up, "t_built");
	r->links = (int)num(up, "links");
	if (json_object_object_get_ex(up, "hosts", &hosts))
		r->hosts = (int)json_object_array_length(hosts);
	if (json_object_object_get_ex(up, "switches", &hosts))
		r->switches = (int)json_object_array_length(hosts);
	e = attach(up, nsfd, w, c);
	if (!e)
		e = watch_arm(w, 120);
	if (e) {
		snprintf(err, len, "cannot watch Mininet's namespaces: %s",
			 strerror(-e));
		goto fail;
	}
	armed = true;
	close(nsfd);		/* it would keep the namespace alive */
	nsfd = -1;
	if (write(in[1], "stop\n", 5) != 5) {
		e = -errno;
		snprintf(err, len, "cannot tell Mininet to stop: %s",
			 strerror(errno));
		goto fail;
	}
	e = read_line(&rd, line, sizeof(line), MN_TIMEOUT_S);
	down = e ? NULL : event(line, "down");
	if (!down) {
		snprintf(err, len, "Mininet did not stop: %s",
			 e ? strerror(-e) : line);
		e = e ? e : -EPROTO;
		goto fail;
	}
	t_stop0 = num(down, "t_stop0");
	r->stop = num(down, "t_stopped") - t_stop0;
	st = proc_wait(py);
	py = -1;
	e = netns_del(ns);
	ns_made = false;
	r->down = now_s() - t_stop0;
	r->leftovers = settle_children();
	if (st || e) {
		snprintf(err, len, "Mininet exited with %d, netns '%s': %s", st,
			 ns, strerror(-e));
		e = e ? e : -EIO;
		goto fail;
	}
	e = watch_wait(w, &wt);
	armed = false;
	if (e) {
		snprintf(err, len, "Mininet's teardown was not seen: %s",
			 strerror(-e));
		goto fail;
	}
	r->kstart = wt.start - t_stop0;
	r->done = wt.done - t_stop0;
	json_object_put(up);
	json_object_put(down);
	close(in[1]);
	close(out[0]);
	return 0;
fail:
	if (py > 0) {
		kill(py, SIGKILL);
		proc_wait(py);
	}
	bench_child = 0;
	proc_end_children(0);
	if (nsfd >= 0)
		close(nsfd);
	if (ns_made)
		netns_del(ns);
	if (armed)
		watch_wait(w, &wt);
	json_object_put(up);
	json_object_put(down);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	return e;
}

int mn_check(const struct mn_opts *o, char *why, size_t len)
{
	char *argv[] = { (char *)o->python, "-c",
			 "import mininet.net, mininet.nodelib", NULL };
	char buf[128];
	int st;

	if (access(o->python, X_OK)) {
		snprintf(why, len, "no '%s'", o->python);
		return -ENOENT;
	}
	if (access(o->script, R_OK)) {
		snprintf(why, len, "no '%s'", o->script);
		return -ENOENT;
	}
	if (!nt_which("mnexec", buf, sizeof(buf))) {
		snprintf(why, len, "no 'mnexec': install the Debian package "
			 "'mininet' (apt-get install --no-install-recommends "
			 "mininet)");
		return -ENOENT;
	}
	if (!nt_which("brctl", buf, sizeof(buf))) {
		snprintf(why, len, "no 'brctl', which Mininet's LinuxBridge "
			 "needs: install the Debian package 'bridge-utils'");
		return -ENOENT;
	}
	st = proc_run(argv);
	if (st) {
		snprintf(why, len, "'%s' cannot import mininet (status %d)",
			 o->python, st);
		return -ENOENT;
	}
	return 0;
}
