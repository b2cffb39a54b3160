// SPDX-License-Identifier: MIT
#include "probe.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nl.h"

enum {
	B_NETNS, B_VETH, B_TBF, B_HTB,
	B_FAIR,		/* htb class, bfifo leaf, u32 on the destination */
	B_INGRESS, B_CLSACT,
	B_XCONNECT,	/* u32 classifier with a mirred redirect: 8 bits in all
			 * (netem is the delay line's probe, delayline.h) */
};

/* A kind is present unless the kernel says it does not know it. */
static bool known(int err)
{
	return err != -ENOENT && err != -EOPNOTSUPP;
}

static int try_qdisc(struct nl *nl, const char *kind)
{
	int err = nl_qdisc_kind(nl, 2, "p0", kind);

	if (!err)
		err = nl_commit(nl);
	/* make room for the next one */
	if (!err && !nl_qdisc_del(nl, 2, "p0", !strcmp(kind, "clsact")) &&
	    nl_commit(nl))
		err = 0;
	return err;
}

/* Runs in a child inside a fresh namespace; the exit code is a bit set. */
static int child(void)
{
	struct nl *nl;
	int bits = 1 << B_NETNS, err;

	nl = nl_open(NULL);
	if (!nl)
		return bits;
	if (nl_veth(nl, "p0", 2, "p1", 3, -1) || nl_commit(nl))
		goto out;
	bits |= 1 << B_VETH;
	if (known(try_qdisc(nl, "htb")))
		bits |= 1 << B_HTB;
	/* the links' fair shaping, as lab.c builds it */
	err = nl_htb(nl, 2, "p0", 2);
	if (!err)
		err = nl_htb_class(nl, 2, "p0", 0, 1, 8000000, 8000000, 3028,
				   1514);
	if (!err)
		err = nl_htb_class(nl, 2, "p0", 1, 3, 4000000, 8000000, 3028,
				   1514);
	if (!err)
		err = nl_bfifo(nl, 2, "p0", 3, 65536);
	if (!err)
		err = nl_classify_dst(nl, 2, "p0", 0xc6120001u, 3);
	if (!err)
		err = nl_commit(nl);
	if (!err)
		bits |= 1 << B_FAIR;
	/* make room for tbf; if this fails, tbf's probe says so */
	err = nl_qdisc_del(nl, 2, "p0", false);
	if (!err)
		err = nl_commit(nl);
	if (known(try_qdisc(nl, "clsact")))
		bits |= 1 << B_CLSACT;
	err = nl_tbf(nl, 2, "p0", 1000000, 3028, 65536);
	if (!err && !nl_commit(nl))
		bits |= 1 << B_TBF;
	err = nl_ingress(nl, 2, "p0");
	if (!err)
		err = nl_commit(nl);
	if (!err) {
		bits |= 1 << B_INGRESS;
		err = nl_redirect(nl, 2, "p0", 3, "p1", false);
		if (!err)
			err = nl_commit(nl);
		if (!err)
			bits |= 1 << B_XCONNECT;
	}
out:
	nl_close(nl);
	return bits;
}

int probe_run(struct probe *pr)
{
	struct utsname u;
	struct stat st;
	int status, bits;
	pid_t pid;

	memset(pr, 0, sizeof(*pr));
	pr->root = geteuid() == 0;
	if (uname(&u) == 0)
		snprintf(pr->kernel, sizeof(pr->kernel), "%s %s", u.sysname,
			 u.release);
	pr->cgroup_v2 = stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0 &&
			st.st_size >= 0;
	if (pr->cgroup_v2) {
		FILE *f = fopen("/sys/fs/cgroup/cgroup.controllers", "re");
		char buf[256] = "";

		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			fclose(f);
		}
		pr->cgroup_v2 = strstr(buf, "cpu") && strstr(buf, "memory");
	}
	pr->cgroup_v1 = stat("/sys/fs/cgroup/cpu/cgroup.procs", &st) == 0 &&
			stat("/sys/fs/cgroup/memory/cgroup.procs", &st) == 0;
	if (!pr->root)
		return 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(0);
		_exit(child());
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (!WIFEXITED(status))
		return -ECHILD;
	bits = WEXITSTATUS(status);
	pr->netns = bits >> B_NETNS & 1;
	pr->veth = bits >> B_VETH & 1;
	pr->tbf = bits >> B_TBF & 1;
	pr->htb = bits >> B_HTB & 1;
	pr->fair = bits >> B_FAIR & 1;
	pr->ingress = bits >> B_INGRESS & 1;
	pr->clsact = bits >> B_CLSACT & 1;
	pr->u32 = bits >> B_XCONNECT & 1;
	pr->mirred = pr->u32;
	return 0;
}
