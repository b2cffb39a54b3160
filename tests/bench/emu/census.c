// SPDX-License-Identifier: MIT
/*
 * rtnetlink dumps through libmnl. The benchmark is a separate program, not
 * part of emu/, so it keeps its own small netlink reader here rather than
 * widening emu/nl.h with dump calls only a benchmark needs.
 */
#include "census.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>

#define DUMP_BUF 32768		/* MNL_SOCKET_DUMP_SIZE of newer libmnl */

struct ifent {
	int index;
	char name[IFNAMSIZ];
};

struct nsctx {
	struct census *c;
	const char *label;
	struct ifent *ifs;
	int nifs, capifs;
	int *ingress;		/* ifindices with an ingress qdisc */
	int ningress, capingress;
	int dev;		/* the device whose filters are dumped */
	int err;
};

void census_init(struct census *c, bool keep_lines)
{
	memset(c, 0, sizeof(*c));
	c->keep = keep_lines;
}

void census_release(struct census *c)
{
	for (int i = 0; i < c->nlines; i++)
		free(c->line[i]);
	free(c->line);
	census_init(c, c->keep);
}

static void emit(struct nsctx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void emit(struct nsctx *x, const char *fmt, ...)
{
	struct census *c = x->c;
	char buf[256], *s;
	int n;
	va_list ap;

	if (!c->keep || x->err)
		return;
	n = snprintf(buf, sizeof(buf), "%s|", x->label);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (c->nlines == c->cap) {
		int ncap = c->cap ? 2 * c->cap : 1024;
		char **nl = realloc(c->line, (size_t)ncap * sizeof(*nl));

		if (!nl) {
			x->err = -ENOMEM;
			return;
		}
		c->line = nl;
		c->cap = ncap;
	}
	s = strdup(buf);
	if (!s) {
		x->err = -ENOMEM;
		return;
	}
	c->line[c->nlines++] = s;
}

static const char *ifname(const struct nsctx *x, int index)
{
	for (int i = 0; i < x->nifs; i++)
		if (x->ifs[i].index == index)
			return x->ifs[i].name;
	return "?";
}

static const char *ip4(const void *p, char *buf)
{
	return inet_ntop(AF_INET, p, buf, INET_ADDRSTRLEN);
}

static const char *str_attr(const struct nlattr *a)
{
	return mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0 ? "" :
	       mnl_attr_get_str(a);
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nsctx *x = data;
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	const char *name = "", *kind = "";
	const struct nlattr *a, *b;

	mnl_attr_for_each(a, nlh, sizeof(*ifm)) {
		if (mnl_attr_get_type(a) == IFLA_IFNAME)
			name = str_attr(a);
		else if (mnl_attr_get_type(a) == IFLA_LINKINFO)
			mnl_attr_for_each_nested(b, a)
				if (mnl_attr_get_type(b) == IFLA_INFO_KIND)
					kind = str_attr(b);
	}
	if (x->nifs == x->capifs) {
		int ncap = x->capifs ? 2 * x->capifs : 64;
		struct ifent *n = realloc(x->ifs, (size_t)ncap * sizeof(*n));

		if (!n) {
			x->err = -ENOMEM;
			return MNL_CB_ERROR;
		}
		x->ifs = n;
		x->capifs = ncap;
	}
	x->ifs[x->nifs].index = ifm->ifi_index;
	snprintf(x->ifs[x->nifs].name, IFNAMSIZ, "%s", name);
	x->nifs++;
	if (!strcmp(name, CENSUS_WATCH_IF))
		return MNL_CB_OK;
	if (!strcmp(kind, "veth"))
		x->c->veth_ends++;
	else if (!strcmp(kind, "bridge"))
		x->c->bridges++;
	emit(x, "link|%s|%s|%s", name, *kind ? kind : "-",
	     ifm->ifi_flags & IFF_UP ? "up" : "down");
	return MNL_CB_OK;
}

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nsctx *x = data;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	const void *addr = NULL;
	char b[INET_ADDRSTRLEN];

	if (ifa->ifa_family != AF_INET)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifa)) {
		if (mnl_attr_get_payload_len(a) < 4)
			continue;
		if (mnl_attr_get_type(a) == IFA_LOCAL ||
		    (mnl_attr_get_type(a) == IFA_ADDRESS && !addr))
			addr = mnl_attr_get_payload(a);
	}
	if (!addr || ((const uint8_t *)addr)[0] == 127)
		return MNL_CB_OK;
	x->c->addrs++;
	emit(x, "addr|%s|%s/%d", ifname(x, (int)ifa->ifa_index), ip4(addr, b),
	     ifa->ifa_prefixlen);
	return MNL_CB_OK;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nsctx *x = data;
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	uint32_t table = rtm->rtm_table, dst = 0, gw = 0;
	int oif = 0;
	char b1[INET_ADDRSTRLEN], b2[INET_ADDRSTRLEN];

	if (rtm->rtm_family != AF_INET)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
		if (mnl_attr_get_payload_len(a) < 4)
			continue;
		switch (mnl_attr_get_type(a)) {
		case RTA_TABLE:
			table = mnl_attr_get_u32(a);
			break;
		case RTA_DST:
			memcpy(&dst, mnl_attr_get_payload(a), 4);
			break;
		case RTA_GATEWAY:
			memcpy(&gw, mnl_attr_get_payload(a), 4);
			break;
		case RTA_OIF:
			oif = (int)mnl_attr_get_u32(a);
			break;
		}
	}
	if (table != RT_TABLE_MAIN)
		return MNL_CB_OK;
	if (rtm->rtm_protocol != RTPROT_KERNEL)
		x->c->routes++;
	emit(x, "route|%s/%d|via %s|%s|proto %u|type %u", ip4(&dst, b1),
	     rtm->rtm_dst_len, ip4(&gw, b2), ifname(x, oif),
	     rtm->rtm_protocol, rtm->rtm_type);
	return MNL_CB_OK;
}

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nsctx *x = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a, *b;
	const struct tc_tbf_qopt *q = NULL;
	uint64_t rate64 = 0;
	const char *kind = "";

	mnl_attr_for_each(a, nlh, sizeof(*tcm)) {
		if (mnl_attr_get_type(a) == TCA_KIND)
			kind = str_attr(a);
		else if (mnl_attr_get_type(a) == TCA_OPTIONS)
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == TCA_TBF_PARMS &&
				    mnl_attr_get_payload_len(b) >= sizeof(*q))
					q = mnl_attr_get_payload(b);
				else if (mnl_attr_get_type(b) ==
						 TCA_TBF_RATE64 &&
					 mnl_attr_get_payload_len(b) >= 8)
					rate64 = mnl_attr_get_u64(b);
			}
	}
	if (!strcmp(kind, "tbf")) {
		x->c->tbf++;
		if (q)
			emit(x, "qdisc|%s|tbf|%x|%x|rate %llu B/s|limit %u|"
			     "buffer %u", ifname(x, tcm->tcm_ifindex),
			     tcm->tcm_handle, tcm->tcm_parent,
			     rate64 ? (unsigned long long)rate64 :
				      (unsigned long long)q->rate.rate,
			     q->limit, q->buffer);
		return MNL_CB_OK;
	}
	if (!strcmp(kind, "ingress")) {
		x->c->ingress++;
		if (x->ningress == x->capingress) {
			int ncap = x->capingress ? 2 * x->capingress : 32;
			int *n = realloc(x->ingress, (size_t)ncap * sizeof(*n));

			if (!n) {
				x->err = -ENOMEM;
				return MNL_CB_ERROR;
			}
			x->ingress = n;
			x->capingress = ncap;
		}
		x->ingress[x->ningress++] = tcm->tcm_ifindex;
	} else if (!strcmp(kind, "htb")) {
		x->c->htb++;
	} else if (!strcmp(kind, "netem")) {
		x->c->netem++;
	}
	emit(x, "qdisc|%s|%s|%x|%x", ifname(x, tcm->tcm_ifindex), kind,
	     tcm->tcm_handle, tcm->tcm_parent);
	return MNL_CB_OK;
}

/* The mirred target of a u32 filter's action list, or 0. */
static int mirred_target(const struct nlattr *acts, int *eaction)
{
	const struct nlattr *act, *a, *o;

	mnl_attr_for_each_nested(act, acts) {
		bool mirred = false;
		const struct tc_mirred *m = NULL;

		mnl_attr_for_each_nested(a, act) {
			if (mnl_attr_get_type(a) == TCA_ACT_KIND)
				mirred = !strcmp(str_attr(a), "mirred");
			else if (mnl_attr_get_type(a) == TCA_ACT_OPTIONS)
				mnl_attr_for_each_nested(o, a)
					if (mnl_attr_get_type(o) ==
						    TCA_MIRRED_PARMS &&
					    mnl_attr_get_payload_len(o) >=
						    sizeof(*m))
						m = mnl_attr_get_payload(o);
		}
		if (mirred && m) {
			*eaction = m->eaction;
			return (int)m->ifindex;
		}
	}
	return 0;
}

static int filter_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nsctx *x = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a, *b;
	const char *kind = "";
	bool rule = false;
	int to = 0, eaction = 0;

	mnl_attr_for_each(a, nlh, sizeof(*tcm)) {
		if (mnl_attr_get_type(a) == TCA_KIND)
			kind = str_attr(a);
		else if (mnl_attr_get_type(a) == TCA_OPTIONS)
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == TCA_U32_SEL)
					rule = true;
				else if (mnl_attr_get_type(b) == TCA_U32_ACT)
					to = mirred_target(b, &eaction);
			}
	}
	if (!rule)
		return MNL_CB_OK;	/* a u32 hash table, not a rule */
	x->c->filters++;
	if (to && eaction == TCA_EGRESS_REDIR)
		x->c->redirects++;
	emit(x, "filter|%s|%s|prio %u|proto %04x|handle %x|-> %s %d",
	     ifname(x, x->dev), kind, TC_H_MAJ(tcm->tcm_info) >> 16,
	     ntohs((uint16_t)TC_H_MIN(tcm->tcm_info)), tcm->tcm_handle,
	     to ? ifname(x, to) : "-", eaction);
	return MNL_CB_OK;
}

static int dump(struct mnl_socket *nl, uint16_t type, const void *hdr,
		size_t hdrlen, mnl_cb_t cb, struct nsctx *x)
{
	static uint32_t seq = 1;
	char buf[DUMP_BUF] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	uint32_t portid = mnl_socket_get_portid(nl);
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++seq;
	memcpy(mnl_nlmsg_put_extra_header(nlh, hdrlen), hdr, hdrlen);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n < 0)
			return errno == EINTR ? -EINTR : -errno;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, x);
		if (ret < 0)
			return x->err ? x->err : -errno;
		if (ret == MNL_CB_STOP)
			return x->err;
	}
}

/* An rtnetlink socket inside the namespace open at nsfd. */
static struct mnl_socket *open_in(int nsfd)
{
	struct mnl_socket *nl = NULL;
	int self, err = 0;

	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return NULL;
	if (setns(nsfd, CLONE_NEWNET) < 0) {
		err = errno;
		close(self);
		errno = err;
		return NULL;
	}
	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = errno;
		if (nl)
			mnl_socket_close(nl);
		nl = NULL;
	}
	if (setns(self, CLONE_NEWNET) < 0)
		abort();	/* back to our own: cannot fail for root */
	close(self);
	errno = err;
	return nl;
}

int census_ns(struct census *c, int nsfd, const char *label)
{
	struct nsctx x = { .c = c, .label = label };
	struct ifinfomsg ifm = { .ifi_family = AF_UNSPEC };
	struct ifaddrmsg ifa = { .ifa_family = AF_INET };
	struct rtmsg rtm = { .rtm_family = AF_INET };
	struct tcmsg tcm = { .tcm_family = AF_UNSPEC };
	struct mnl_socket *nl = open_in(nsfd);
	int err;

	if (!nl)
		return -errno;
	c->netns++;
	err = dump(nl, RTM_GETLINK, &ifm, sizeof(ifm), link_cb, &x);
	if (!err)
		err = dump(nl, RTM_GETADDR, &ifa, sizeof(ifa), addr_cb, &x);
	if (!err)
		err = dump(nl, RTM_GETROUTE, &rtm, sizeof(rtm), route_cb, &x);
	if (!err)
		err = dump(nl, RTM_GETQDISC, &tcm, sizeof(tcm), qdisc_cb, &x);
	for (int i = 0; !err && i < x.ningress; i++) {
		struct tcmsg f = {
			.tcm_family = AF_UNSPEC,
			.tcm_ifindex = x.ingress[i],
			.tcm_parent = TC_H_MAKE(TC_H_INGRESS, 0),
		};

		x.dev = x.ingress[i];
		err = dump(nl, RTM_GETTFILTER, &f, sizeof(f), filter_cb, &x);
	}
	mnl_socket_close(nl);
	free(x.ifs);
	free(x.ingress);
	return err;
}

bool census_same_counts(const struct census *a, const struct census *b)
{
	return a->netns == b->netns && a->veth_ends == b->veth_ends &&
	       a->bridges == b->bridges && a->addrs == b->addrs &&
	       a->routes == b->routes && a->tbf == b->tbf &&
	       a->ingress == b->ingress && a->htb == b->htb &&
	       a->netem == b->netem && a->filters == b->filters &&
	       a->redirects == b->redirects;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int census_diff(struct census *a, struct census *b, FILE *f, int max)
{
	int i = 0, j = 0, diff = 0;

	qsort(a->line, (size_t)a->nlines, sizeof(*a->line), cmp_line);
	qsort(b->line, (size_t)b->nlines, sizeof(*b->line), cmp_line);
	while (i < a->nlines || j < b->nlines) {
		int c = i == a->nlines ? 1 : j == b->nlines ? -1 :
			strcmp(a->line[i], b->line[j]);

		if (c == 0) {
			i++;
			j++;
			continue;
		}
		if (diff++ < max && f)
			fprintf(f, "    %s %s\n", c < 0 ? "-" : "+",
				c < 0 ? a->line[i] : b->line[j]);
		if (c < 0)
			i++;
		else
			j++;
	}
	return diff;
}
