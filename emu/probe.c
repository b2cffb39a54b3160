// SPDX-License-Identifier: MIT
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "nfqrule.h"
#include "nl.h"
#include "spawn.h"

#define PROBE_BUFSZ 8192

enum {
	B_NETNS, B_VETH, B_TBF, B_HTB,
	B_FAIR,		/* tbf over htb class, bfifo leaf, u32 on the dst */
	B_INGRESS, B_CLSACT,
	B_XCONNECT,	/* u32 classifier with a mirred redirect */
	B_NETEM,	/* netem with a delay */
	B_NFQUEUE,	/* a packet reaches a queue through an iptables rule */
	B_LOSS,		/* an iptables statistic rule drops, and only it */
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

/* Send one nfnetlink request and wait for its acknowledgement. */
static int nfq_request(struct mnl_socket *nl, struct nlmsghdr *nlh)
{
	char buf[PROBE_BUFSZ];
	unsigned int portid = mnl_socket_get_portid(nl);
	uint32_t seq = nlh->nlmsg_seq;
	int ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)ret, seq, portid, NULL, NULL);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

/* Does a UDP datagram to 127.0.0.1 reach queue 0 through an iptables
 * rule? (lo must be up.) */
static bool try_nfqueue(void)
{
	char buf[PROBE_BUFSZ];
	char *argv[] = {
		"iptables", "-t", "mangle", "-A", "OUTPUT", "-o", "lo",
		"-p", "udp", "-j", "NFQUEUE", "--queue-num", "0", NULL
	};
	struct sockaddr_in to = {
		.sin_family = AF_INET, .sin_port = htons(9),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct spawn sp = { .argv = argv, .nsfd = -1, .out_fd = -1,
			    .timeout_ms = 10000 };
	struct spawn_result res;
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct pollfd pfd;
	bool ok = false;
	int udp;

	sp.path = nfqrule_iptables();
	if (!sp.path)
		return false;
	nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!nl)
		return false;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto close_nl;
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, 0);
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = 1;
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_META, 0);
	if (nfq_request(nl, nlh) < 0)
		goto close_nl;
	/* iptables runs in this (throwaway) namespace, the caller's */
	if (spawn_run(&sp, &res) || !spawn_ok(&res))
		goto close_nl;
	udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (udp < 0)
		goto close_nl;
	if (sendto(udp, "probe", 5, MSG_DONTWAIT, (struct sockaddr *)&to,
		   sizeof(to)) < 0)
		goto close_udp;
	pfd.fd = mnl_socket_get_fd(nl);
	pfd.events = POLLIN;
	while (!ok && poll(&pfd, 1, 1000) > 0) {
		int len = (int)recv(pfd.fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (len < 0)
			break;
		for (nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len))
			if (nlh->nlmsg_type ==
			    ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
				ok = true;
	}
close_udp:
	close(udp);
close_nl:
	mnl_socket_close(nl);
	return ok;
}

/* Run iptables (this namespace) with argv; whether it succeeded. */
static bool iptables_ok(char *argv[])
{
	struct spawn sp = { .argv = argv, .nsfd = -1, .out_fd = -1,
			    .timeout_ms = 10000 };
	struct spawn_result res;

	sp.path = nfqrule_iptables();
	return sp.path && !spawn_run(&sp, &res) && spawn_ok(&res);
}

/* Send one datagram to 127.0.0.1:9 on s; whether rx gets it within ms. */
static bool loops_back(int s, int rx, int ms)
{
	struct sockaddr_in to = {
		.sin_family = AF_INET, .sin_port = htons(9),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct pollfd pfd = { .fd = rx, .events = POLLIN };
	char c;

	/* a drop in OUTPUT may fail the send itself (EPERM): not received */
	if (sendto(s, "p", 1, MSG_DONTWAIT, (struct sockaddr *)&to,
		   sizeof(to)) < 0)
		return false;
	return poll(&pfd, 1, ms) == 1 && recv(rx, &c, 1, MSG_DONTWAIT) == 1;
}

/*
 * Random loss as impair_loss.c makes it: with a statistic rule of
 * probability 1 a datagram on lo is dropped, without it the next one
 * arrives. (lo must be up; before the NFQUEUE probe, whose rule outlives
 * its queue.)
 */
static bool try_loss(void)
{
	char *add[] = {
		"iptables", "-t", "filter", "-A", "OUTPUT", "-o", "lo",
		"-p", "udp", "-m", "statistic", "--mode", "random",
		"--probability", "1", "-j", "DROP", NULL
	};
	char *del[sizeof(add) / sizeof(add[0])];
	struct sockaddr_in at = {
		.sin_family = AF_INET, .sin_port = htons(9),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok = false;

	memcpy(del, add, sizeof(add));
	del[3] = "-D";
	if (rx >= 0 && tx >= 0 &&
	    !bind(rx, (struct sockaddr *)&at, sizeof(at)) &&
	    iptables_ok(add)) {
		bool dropped = !loops_back(tx, rx, 100);

		ok = dropped && iptables_ok(del) && loops_back(tx, rx, 1000);
	}
	if (rx >= 0)
		close(rx);
	if (tx >= 0)
		close(tx);
	return ok;
}

/* Runs in a child inside a fresh namespace; returns a bit set. */
static int child(void)
{
	struct nl *nl;
	int bits = 1 << B_NETNS, err;

	nl = nl_open(NULL);
	if (!nl)
		return bits;
	if (!nl_link_up(nl, 1, "lo") && !nl_commit(nl)) {
		if (try_loss())
			bits |= 1 << B_LOSS;
		if (try_nfqueue())
			bits |= 1 << B_NFQUEUE;
	}
	if (!nl_netem(nl, 1, "lo", 1000000, 1000) && !nl_commit(nl))
		bits |= 1 << B_NETEM;
	if (nl_veth(nl, "p0", 2, "p1", 3, -1) || nl_commit(nl))
		goto out;
	bits |= 1 << B_VETH;
	if (known(try_qdisc(nl, "htb")))
		bits |= 1 << B_HTB;
	/* the links' fair shaping, as lab.c builds it */
	err = nl_tbf_over(nl, 2, "p0", 8000000, 3028);
	if (!err)
		err = nl_htb(nl, 2, "p0", 3, true);
	if (!err)
		err = nl_classify_small(nl, 2, "p0", 128);
	if (!err)
		err = nl_htb_class(nl, 2, "p0", 0, 3, 16000000, 16000000, 3028,
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
	int status, bits = 0, pfd[2];
	ssize_t got;
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
	/* the answer comes back through a pipe: more bits than an exit
	 * status holds */
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		close(pfd[0]);
		bits = unshare(CLONE_NEWNET) ? 0 : child();
		_exit(write(pfd[1], &bits, sizeof(bits)) == sizeof(bits) ? 0 :
									    1);
	}
	close(pfd[1]);
	do
		got = read(pfd[0], &bits, sizeof(bits));
	while (got < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (got != (ssize_t)sizeof(bits) || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -ECHILD;
	pr->netns = bits >> B_NETNS & 1;
	pr->veth = bits >> B_VETH & 1;
	pr->tbf = bits >> B_TBF & 1;
	pr->htb = bits >> B_HTB & 1;
	pr->fair = bits >> B_FAIR & 1;
	pr->ingress = bits >> B_INGRESS & 1;
	pr->clsact = bits >> B_CLSACT & 1;
	pr->u32 = bits >> B_XCONNECT & 1;
	pr->mirred = pr->u32;
	pr->netem = bits >> B_NETEM & 1;
	pr->nfqueue = bits >> B_NFQUEUE & 1;
	pr->loss = bits >> B_LOSS & 1;
	return 0;
}
