// SPDX-License-Identifier: MIT
/* A plan's emulation as containerlab topology files; see clab.h. */
#include "tools/clab.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "emu/lab.h"
#include "twin/grow.h"

static int add(struct clab *c, int *cap, const struct clab_link *l)
{
	struct clab_link *x = grow_array(c->link, cap, c->nlinks, sizeof(*x),
					 256);

	if (!x)
		return -ENOMEM;
	c->link = x;
	c->link[c->nlinks++] = *l;
	return 0;
}

static struct clab_link veth(int host, int u, const char *un, int v,
			     const char *vn)
{
	struct clab_link l = { .host = host, .fibre = -1, .lambda = -1 };

	l.end[0].node = u;
	l.end[1].node = v;
	snprintf(l.end[0].ifname, sizeof(l.end[0].ifname), "%s", un);
	snprintf(l.end[1].ifname, sizeof(l.end[1].ifname), "%s", vn);
	return l;
}

/* One wavelength of a fibre: a veth on one host, a tunnel between two. */
static int line(struct clab *c, int *cap, int f, int lambda)
{
	const struct scn_fibre *fb = &c->p->sc->fibres[f];
	int ha = c->pt->host[fb->a], hb = c->pt->host[fb->b], err;
	struct clab_link l;
	char name[16];

	snprintf(name, sizeof(name), "f%dw%d", f, lambda);
	if (ha == hb) {
		l = veth(ha, fb->a, name, fb->b, name);
		l.fibre = f;
		l.lambda = lambda;
		return add(c, cap, &l);
	}
	l = veth(ha, fb->a, name, -1, "");
	l.vxlan = true;
	l.remote = hb;
	l.vni = partition_vni(c->pt, f, lambda, 0);
	l.fibre = f;
	l.lambda = lambda;
	err = add(c, cap, &l);
	l.host = hb;
	l.remote = ha;
	l.end[0].node = fb->b;
	return err ? err : add(c, cap, &l);
}

int clab_build(const struct plan *p, const struct partition *pt,
	       const uint32_t *underlay, struct clab *out)
{
	const struct scenario *sc = p->sc;
	int wmax = pt->wmax, cap = 0, err = 0;
	bool *seen = calloc((size_t)sc->nfibres * (size_t)wmax + 1, 1);
	char a[16], b[16];

	*out = (struct clab){ .p = p, .pt = pt };
	out->underlay = malloc((size_t)pt->nhosts * sizeof(*out->underlay));
	if (!seen || !out->underlay) {
		free(seen);
		clab_release(out);
		return -ENOMEM;
	}
	memcpy(out->underlay, underlay,
	       (size_t)pt->nhosts * sizeof(*out->underlay));
	for (int s = 0; s < sc->nnodes && !err; s++) {
		struct clab_link l;

		if (sc->nodes[s].kind != NODE_SERVER)
			continue;
		lab_access_if(s, b, sizeof(b));
		l = veth(pt->host[s], s, LAB_SERVER_IF, sc->nodes[s].attach, b);
		err = add(out, &cap, &l);
	}
	for (int i = 0; i < p->net->nlp && !err; i++) {
		const struct lightpath *lp = &p->net->lp[i];

		lab_lightpath_if(i, a, sizeof(a));
		snprintf(b, sizeof(b), "ad%d", i);
		for (int end = 0; end < 2 && !err; end++) {
			int r = end ? lp->b : lp->a;
			struct clab_link l = veth(pt->host[r], r, a,
						  sc->nodes[r].attach, b);

			err = add(out, &cap, &l);
		}
		for (int k = 0; k < lp->nfib && !err; k++) {
			size_t at = (size_t)lp->fib[k] * (size_t)wmax +
				    (size_t)lp->lambda;

			if (seen[at])
				continue;
			seen[at] = true;
			err = line(out, &cap, lp->fib[k], lp->lambda);
		}
	}
	free(seen);
	if (err)
		clab_release(out);
	return err;
}

void clab_release(struct clab *c)
{
	free(c->link);
	free(c->underlay);
	c->link = NULL;
	c->underlay = NULL;
	c->nlinks = 0;
}

/* ---- checks ---------------------------------------------------------- */

/* A name containerlab takes for a node: [A-Za-z0-9][A-Za-z0-9-._|]*. */
static bool node_name_ok(const char *s)
{
	bool first = true;

	for (; *s; s++, first = false) {
		bool alnum = (*s >= 'a' && *s <= 'z') ||
			     (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9');

		if (!alnum && (first || !strchr("-._|", *s)))
			return false;
	}
	return !first;
}

/* Each interface in use: at which node, in which link. */
struct port {
	int node, link;
	const char *ifname;
};

static int port_cmp(const void *x, const void *y)
{
	const struct port *a = x, *b = y;

	return a->node != b->node ? (a->node > b->node) - (a->node < b->node)
				  : strcmp(a->ifname, b->ifname);
}

/* Each tunnel end: its host and VNI. */
struct tun {
	int host, link;
	unsigned vni;
};

static int tun_cmp(const void *x, const void *y)
{
	const struct tun *a = x, *b = y;

	if (a->host != b->host)
		return (a->host > b->host) - (a->host < b->host);
	return (a->vni > b->vni) - (a->vni < b->vni);
}

struct index {
	struct port *port;
	int nports;
	struct tun *tun;
	int ntuns;
};

static const struct port *port_at(const struct index *ix, int node,
				  const char *ifname)
{
	struct port key = { .node = node, .ifname = ifname };

	return bsearch(&key, ix->port, (size_t)ix->nports, sizeof(key),
		       port_cmp);
}

static const struct tun *tun_at(const struct index *ix, int host,
				unsigned vni)
{
	struct tun key = { .host = host, .vni = vni };

	return bsearch(&key, ix->tun, (size_t)ix->ntuns, sizeof(key), tun_cmp);
}

static int fail(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The link's ends, each on a node of the link's host, each name fit. */
static int check_link(const struct clab *c, const struct clab_link *l,
		      char *why, size_t len)
{
	const struct scenario *sc = c->p->sc;

	for (int e = 0; e < (l->vxlan ? 1 : 2); e++) {
		const struct clab_end *x = &l->end[e];
		size_t n;

		if (x->node < 0 || x->node >= sc->nnodes)
			return fail(why, len, "a link ends at no node");
		n = strnlen(x->ifname, sizeof(x->ifname));
		if (n == 0 || n >= sizeof(x->ifname))
			return fail(why, len, "node %s: an interface name of "
				    "%zu bytes (1 to 15)",
				    sc->nodes[x->node].name, n);
		if (c->pt->host[x->node] != l->host)
			return fail(why, len, "host %d's link ends at %s:%s, "
				    "which is on host %d", l->host + 1,
				    sc->nodes[x->node].name, x->ifname,
				    c->pt->host[x->node] + 1);
	}
	if (l->vxlan && (l->remote < 0 || l->remote >= c->pt->nhosts ||
			 l->remote == l->host))
		return fail(why, len, "the tunnel at %s:%s leads to no other "
			    "host", sc->nodes[l->end[0].node].name,
			    l->end[0].ifname);
	if (l->vxlan && (l->vni < 1 || l->vni > 16777215))
		return fail(why, len, "the tunnel at %s:%s has VNI %u (1 to "
			    "16777215)", sc->nodes[l->end[0].node].name,
			    l->end[0].ifname, l->vni);
	return 0;
}

/* Fibre wavelength `ifname` leaves ROADM x; the ROADM it reaches. */
static int hop(const struct clab *c, const struct index *ix, int x,
	       const char *ifname, int *next, char *why, size_t len)
{
	const struct scenario *sc = c->p->sc;
	const struct port *pt = port_at(ix, x, ifname);
	const struct clab_link *l, *m;
	const struct tun *t;

	if (!pt)
		return fail(why, len, "ROADM %s has no port %s", sc->nodes[x].name,
			    ifname);
	l = &c->link[pt->link];
	if (!l->vxlan) {
		*next = l->end[l->end[0].node == x ? 1 : 0].node;
		return strcmp(l->end[0].ifname, l->end[1].ifname) ?
			       fail(why, len, "%s:%s is joined to another "
				    "wavelength", sc->nodes[x].name, ifname) :
			       0;
	}
	t = tun_at(ix, l->remote, l->vni);
	m = t ? &c->link[t->link] : NULL;
	if (!m || m->remote != l->host || strcmp(m->end[0].ifname, ifname))
		return fail(why, len, "the tunnel at %s:%s (VNI %u) has no "
			    "mirror at host %d", sc->nodes[x].name, ifname,
			    l->vni, l->remote + 1);
	*next = m->end[0].node;
	return 0;
}

/* Lightpath l: router lp<l> - ad<l> ... ad<l> - router, contiguous. */
static int check_chain(const struct clab *c, const struct index *ix, int l,
		       char *why, size_t len)
{
	const struct scenario *sc = c->p->sc;
	const struct lightpath *lp = &c->p->net->lp[l];
	char lpn[16], adn[16], fw[16];
	int x = sc->nodes[lp->a].attach, err = 0;

	lab_lightpath_if(l, lpn, sizeof(lpn));
	snprintf(adn, sizeof(adn), "ad%d", l);
	for (int end = 0; end < 2; end++) {
		int r = end ? lp->b : lp->a;
		const struct port *pt = port_at(ix, r, lpn);
		const struct clab_link *k = pt ? &c->link[pt->link] : NULL;

		if (!k || k->vxlan || k->end[1].node != sc->nodes[r].attach ||
		    strcmp(k->end[1].ifname, adn))
			return fail(why, len, "lightpath %d: router %s's %s does "
				    "not reach its ROADM's %s", l,
				    sc->nodes[r].name, lpn, adn);
	}
	for (int i = 0; i < lp->nfib && !err; i++) {
		char at[200];

		snprintf(fw, sizeof(fw), "f%dw%d", lp->fib[i], lp->lambda);
		err = hop(c, ix, x, fw, &x, at, sizeof(at));
		if (err)
			return fail(why, len, "lightpath %d is broken: %s", l,
				    at);
	}
	if (!err && x != sc->nodes[lp->b].attach)
		return fail(why, len, "lightpath %d ends at ROADM %s, not at "
			    "%s", l, sc->nodes[x].name,
			    sc->nodes[sc->nodes[lp->b].attach].name);
	return err;
}

int clab_check(const struct clab *c, char *why, size_t len)
{
	const struct scenario *sc = c->p->sc;
	struct index ix = { 0 };
	int err = 0;

	for (int i = 0; i < sc->nnodes; i++)
		if (!node_name_ok(sc->nodes[i].name))
			return fail(why, len, "containerlab refuses node name "
				    "'%s' ([A-Za-z0-9] then [A-Za-z0-9-._|])",
				    sc->nodes[i].name);
	ix.port = malloc((size_t)(2 * c->nlinks + 1) * sizeof(*ix.port));
	ix.tun = malloc((size_t)(c->nlinks + 1) * sizeof(*ix.tun));
	if (!ix.port || !ix.tun) {
		err = -ENOMEM;
		snprintf(why, len, "out of memory");
	}
	for (int i = 0; i < c->nlinks && !err; i++) {
		const struct clab_link *l = &c->link[i];

		err = check_link(c, l, why, len);
		for (int e = 0; !err && e < (l->vxlan ? 1 : 2); e++)
			ix.port[ix.nports++] = (struct port){
				l->end[e].node, i, l->end[e].ifname };
		if (l->vxlan)
			ix.tun[ix.ntuns++] = (struct tun){ l->host, i, l->vni };
	}
	if (!err) {
		qsort(ix.port, (size_t)ix.nports, sizeof(*ix.port), port_cmp);
		qsort(ix.tun, (size_t)ix.ntuns, sizeof(*ix.tun), tun_cmp);
	}
	for (int i = 1; i < ix.nports && !err; i++)
		if (!port_cmp(&ix.port[i - 1], &ix.port[i]))
			err = fail(why, len, "interface %s of node %s is in two "
				   "links", ix.port[i].ifname,
				   sc->nodes[ix.port[i].node].name);
	for (int i = 1; i < ix.ntuns && !err; i++)
		if (!tun_cmp(&ix.tun[i - 1], &ix.tun[i]))
			err = fail(why, len, "VNI %u is used twice on host %d",
				   ix.tun[i].vni, ix.tun[i].host + 1);
	for (int i = 0; i < c->p->net->nlp && !err; i++)
		err = check_chain(c, &ix, i, why, len);
	free(ix.port);
	free(ix.tun);
	return err;
}

/* ---- the file -------------------------------------------------------- */

struct em {
	yaml_emitter_t e;
	int err;
};

static void ev(struct em *m, yaml_event_t *e, int ok)
{
	if (m->err)
		return;
	if (!ok || !yaml_emitter_emit(&m->e, e))
		m->err = -EIO;
}

/* A scalar: quoted when `quote` (a name, a command: never a number). */
static void scalar(struct em *m, const char *s, bool quote)
{
	yaml_event_t e;

	ev(m, &e, yaml_scalar_event_initialize(
			  &e, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1,
			  1, quote ? YAML_DOUBLE_QUOTED_SCALAR_STYLE :
				     YAML_PLAIN_SCALAR_STYLE));
}

static void pair(struct em *m, const char *k, const char *v, bool quote)
{
	scalar(m, k, false);
	scalar(m, v, quote);
}

static void map(struct em *m, bool start)
{
	yaml_event_t e;

	ev(m, &e, start ? yaml_mapping_start_event_initialize(
				  &e, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE)
			: yaml_mapping_end_event_initialize(&e));
}

static void seq(struct em *m, bool start)
{
	yaml_event_t e;

	ev(m, &e, start ? yaml_sequence_start_event_initialize(
				  &e, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE)
			: yaml_sequence_end_event_initialize(&e));
}

static void num(struct em *m, const char *k, unsigned v)
{
	char b[16];

	snprintf(b, sizeof(b), "%u", v);
	pair(m, k, b, false);
}

static void endpoint(struct em *m, const struct clab *c,
		     const struct clab_end *x)
{
	map(m, true);
	pair(m, "node", c->p->sc->nodes[x->node].name, true);
	pair(m, "interface", x->ifname, true);
	map(m, false);
}

static void link_out(struct em *m, const struct clab *c,
		     const struct clab_link *l)
{
	char b[16];
	uint32_t a = c->underlay[l->remote];

	map(m, true);
	pair(m, "type", l->vxlan ? "vxlan-stitch" : "veth", false);
	if (l->vxlan) {
		scalar(m, "endpoint", false);
		endpoint(m, c, &l->end[0]);
		snprintf(b, sizeof(b), "%u.%u.%u.%u", a >> 24, (a >> 16) & 255,
			 (a >> 8) & 255, a & 255);
		pair(m, "remote", b, false);
		num(m, "vni", l->vni);
		num(m, "dst-port", CLAB_VXLAN_PORT);
	} else {
		scalar(m, "endpoints", false);
		seq(m, true);
		endpoint(m, c, &l->end[0]);
		endpoint(m, c, &l->end[1]);
		seq(m, false);
	}
	num(m, "mtu", CLAB_MTU);
	map(m, false);
}

static void node_out(struct em *m, const struct clab *c, int i,
		     const struct clab_opts *o)
{
	char pfx[32], cmd[512];

	lab_part_prefix(o->prefix, i, pfx, sizeof(pfx));
	snprintf(cmd, sizeof(cmd),
		 "/usr/local/bin/twinlab up /twinlab/scenario.yaml --node %s "
		 "--here --prefix %s --scheduler %s --dilation %.17g",
		 c->p->sc->nodes[i].name, pfx, o->scheduler, o->dilation);
	scalar(m, c->p->sc->nodes[i].name, true);
	map(m, true);
	scalar(m, "exec", false);
	seq(m, true);
	scalar(m, cmd, true);
	seq(m, false);
	map(m, false);
}

static int put(void *data, unsigned char *buf, size_t size)
{
	return fwrite(buf, 1, size, data) == size;
}

int clab_write(const struct clab *c, int host, const struct clab_opts *o,
	       FILE *f)
{
	struct em m = { .err = 0 };
	yaml_event_t e;
	char name[128], bind[1100];

	if (!yaml_emitter_initialize(&m.e))
		return -ENOMEM;
	yaml_emitter_set_output(&m.e, put, f);
	yaml_emitter_set_unicode(&m.e, 1);
	yaml_emitter_set_width(&m.e, 1000);
	ev(&m, &e, yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING));
	ev(&m, &e, yaml_document_start_event_initialize(&e, NULL, NULL, NULL,
							1));
	map(&m, true);
	snprintf(name, sizeof(name), "%s-h%d", o->lab, host + 1);
	pair(&m, "name", name, true);
	scalar(&m, "topology", false);
	map(&m, true);
	scalar(&m, "defaults", false);
	map(&m, true);
	pair(&m, "kind", "linux", false);
	pair(&m, "image", o->image, true);
	pair(&m, "network-mode", "none", false);
	scalar(&m, "binds", false);
	seq(&m, true);
	snprintf(bind, sizeof(bind), "%s:/usr/local/bin/twinlab:ro",
		 o->twinlab);
	scalar(&m, bind, true);
	scalar(&m, "scenario.yaml:/twinlab/scenario.yaml:ro", true);
	seq(&m, false);
	map(&m, false);
	scalar(&m, "nodes", false);
	map(&m, true);
	for (int i = 0; i < c->p->sc->nnodes; i++)
		if (c->pt->host[i] == host)
			node_out(&m, c, i, o);
	map(&m, false);
	scalar(&m, "links", false);
	seq(&m, true);
	for (int i = 0; i < c->nlinks; i++)
		if (c->link[i].host == host)
			link_out(&m, c, &c->link[i]);
	seq(&m, false);
	map(&m, false);
	map(&m, false);
	ev(&m, &e, yaml_document_end_event_initialize(&e, 1));
	ev(&m, &e, yaml_stream_end_event_initialize(&e));
	if (!m.err && !yaml_emitter_flush(&m.e))
		m.err = -EIO;
	yaml_emitter_delete(&m.e);
	return m.err;
}
