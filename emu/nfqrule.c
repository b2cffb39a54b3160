// SPDX-License-Identifier: MIT
/* The delay line's iptables rules; see nfqrule.h. */
#include "nfqrule.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns.h"
#include "spawn.h"

#define NFQRULE_TIMEOUT_MS 10000

static const char *const iptables_paths[] = {
	"/usr/sbin/iptables-nft",
	"/usr/sbin/iptables",
};

const char *nfqrule_iptables(void)
{
	for (size_t i = 0; i < sizeof(iptables_paths) /
			       sizeof(iptables_paths[0]); i++)
		if (access(iptables_paths[i], X_OK) == 0)
			return iptables_paths[i];
	return NULL;
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

int nfqrule_set(const char *netns, bool add, const char *chain,
		bool match_in, const char *ifname, uint16_t num)
{
	char numbuf[8];
	char *argv[] = {
		"iptables", "-t", "mangle", NULL, (char *)chain,
		match_in ? "-i" : "-o", (char *)ifname,
		"-j", "NFQUEUE", "--queue-num", numbuf, NULL
	};

	if (!netns || !chain || !ifname || !netns_name_ok(netns) ||
	    !nfqrule_ifname_ok(ifname))
		return -EINVAL;
	if (strcmp(chain, "FORWARD") &&
	    !(match_in && !strcmp(chain, "PREROUTING")) &&
	    !(!match_in && !strcmp(chain, "POSTROUTING")) &&
	    !(!match_in && !strcmp(chain, "OUTPUT")))
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

	if (!netns || !ifname || !netns_name_ok(netns) ||
	    !nfqrule_ifname_ok(ifname) || !(p > 0 && p <= 1))
		return -EINVAL;
	/* iptables keeps the probability as a 31-bit fraction and prints it
	 * with 11 decimals; -C and -D match what -A was given that way */
	snprintf(pbuf, sizeof(pbuf), "%.11f", p);
	return rule_set(netns, add, argv);
}
