// SPDX-License-Identifier: MIT
/* twinlab export: the emulation as containerlab topology files. */
#include "tools/twinlab.h"
#include "tools/json.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/lab.h"
#include "tools/args.h"
#include "tools/clab.h"
#include "tools/hosts.h"
#include "tools/planout.h"
#include "twin/addr.h"
#include "twin/sched.h"
#include "twin/yamlf.h"

#define EXPORT_IMAGE "twinlab-node:bookworm"
#define EXPORT_TWINLAB "/usr/local/bin/twinlab"
#define HOSTS_FILE_MAX (64 * 1024)

#define EXPORT_HELP \
	"usage: %s export SCENARIO --containerlab DIR [--scheduler NAME]\n" \
	"       [--hosts N | --hosts-file F] [--dilation N] [--prefix P]\n" \
	"       [--image IMAGE] [--json]\n\n" \
	"Writes the emulation 'up' would build as containerlab topology " \
	"files, one per\nhost (<name>-h<k>.clab.yml), with the scenario, " \
	"the plan and its split\n(plan.json), the nodes' image " \
	"(Containerfile) and how to deploy them\n(README.md). Every node " \
	"starts with 'twinlab up --node': the same code\nas a whole 'up'. " \
	"No root needed; DIR must not exist or be empty.\n\n" \
	"  -c, --containerlab DIR  where to write the files\n" \
	"  -s, --scheduler NAME  the scheduler that places the tasks " \
	"(default mst)\n" \
	"  --hosts N         split over N hosts (1 to %d, default 1): each " \
	"ROADM site\n" \
	"                    whole on one, fibres cut into VXLAN tunnels; " \
	"hosts' underlay\n" \
	"                    addresses 192.0.2.1 ... (to edit, or use " \
	"--hosts-file)\n" \
	"  --hosts-file F    one host's IPv4 underlay address a line ('#' " \
	"comments):\n" \
	"                    as many hosts as lines\n" \
	"  -D, --dilation N  the dilation the nodes are built at (1 to %g, " \
	"default 1)\n" \
	"  -p, --prefix P    node i's prefix is P<i> (default tl; with the " \
	"node count's\n" \
	"                    digits at most %d characters)\n" \
	"  --image IMAGE     every node's image (default " EXPORT_IMAGE ", " \
	"built from\n" \
	"                    the Containerfile written)\n" \
	"  -j, --json        say what was written as JSON\n"

/* Underlay addresses: one a line, '#' comments, blank lines skipped. */
static int read_hosts(const char *path, uint32_t **out, int *n)
{
	char *text = NULL, *next;
	size_t len = 0;
	struct scn_error e = { 0 };
	int err = yf_read_file(path, &text, &len, &e), lineno = 0;

	*out = NULL;
	*n = 0;
	if (err) {
		p_err("%s", e.msg);
		return 1;
	}
	if (len > HOSTS_FILE_MAX || memchr(text, '\0', len)) {
		p_err("'%s' is not a hosts file (text of at most %d bytes)",
		      path, HOSTS_FILE_MAX);
		free(text);
		return 1;
	}
	*out = calloc(PART_HOSTS_MAX, sizeof(**out));
	if (!*out) {
		free(text);
		p_err("out of memory");
		return 1;
	}
	for (char *l = text; l; l = next) {
		char *hash, *end;
		struct in_addr a;

		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		hash = strchr(l, '#');
		lineno++;
		if (hash)
			*hash = '\0';
		l += strspn(l, " \t\r");
		end = l + strlen(l);
		while (end > l && strchr(" \t\r", end[-1]))
			*--end = '\0';
		if (!*l)
			continue;
		if (inet_pton(AF_INET, l, &a) != 1) {
			p_err("%s:%d: '%s' is not an IPv4 address", path, lineno,
			      l);
			goto fail;
		}
		if (*n == PART_HOSTS_MAX) {
			p_err("%s:%d: more than %d hosts", path, lineno,
			      PART_HOSTS_MAX);
			goto fail;
		}
		(*out)[*n] = ntohl(a.s_addr);
		for (int i = 0; i < *n; i++)
			if ((*out)[i] == (*out)[*n]) {
				p_err("%s:%d: %s is host %d's address too", path,
				      lineno, l, i + 1);
				goto fail;
			}
		(*n)++;
	}
	free(text);
	if (*n == 0) {
		p_err("'%s' names no host", path);
		free(*out);
		*out = NULL;
		return 1;
	}
	return 0;
fail:
	free(text);
	free(*out);
	*out = NULL;
	return 1;
}

/* The files, written into a directory of their own (tmp). */
struct writing {
	const struct clab *c;
	const struct clab_opts *o;
	const char *scenario_path, *tmp;
	struct json_object *files;	/* names written */
};

/* File `name` in the directory being written, or NULL (said). */
static FILE *create(const struct writing *w, const char *name)
{
	char path[1400];
	FILE *f = NULL;
	int fd;

	snprintf(path, sizeof(path), "%.1100s/%.250s", w->tmp, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd >= 0 && !(f = fdopen(fd, "w")))
		close(fd);
	if (!f)
		p_err("cannot create '%s': %s", name, strerror(errno));
	return f;
}

static int done(const struct writing *w, const char *name, FILE *f, int err)
{
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		p_err("cannot write '%s': %s", name, strerror(-err));
	else if (json_push(w->files, json_object_new_string(name)))
		err = -ENOMEM;
	return err;
}

static int write_hosts(const struct writing *w)
{
	for (int h = 0; h < w->c->pt->nhosts; h++) {
		char name[160];
		FILE *f;

		snprintf(name, sizeof(name), "%s-h%d.clab.yml", w->o->lab, h + 1);
		f = create(w, name);
		if (!f)
			return -EIO;
		if (done(w, name, f, clab_write(w->c, h, w->o, f)))
			return -EIO;
	}
	return 0;
}

static int write_scenario(const struct writing *w)
{
	char *text = NULL;
	size_t len = 0;
	struct scn_error e = { 0 };
	int err = yf_read_file(w->scenario_path, &text, &len, &e);
	FILE *f;

	if (err) {
		p_err("%s", e.msg);
		return err;
	}
	f = create(w, "scenario.yaml");
	if (!f) {
		free(text);
		return -EIO;
	}
	err = fwrite(text, 1, len, f) == len ? 0 : -EIO;
	free(text);
	return done(w, "scenario.yaml", f, err);
}

static int write_plan(const struct writing *w, const struct partition *naive)
{
	const struct plan *p = w->c->p;
	struct addressing *a = addressing_new(p);
	struct json_object *o = a ? plan_json_addressed(p, a) : NULL;
	const char *s;
	FILE *f;
	int err;

	addressing_free(a);
	if (!o || json_add(o, "split", hosts_json(p, w->c->pt, naive))) {
		json_object_put(o);
		p_err("cannot build the plan's JSON: out of memory");
		return -ENOMEM;
	}
	f = create(w, "plan.json");
	if (!f) {
		json_object_put(o);
		return -EIO;
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE);
	err = s && fprintf(f, "%s\n", s) > 0 ? 0 : -EIO;
	json_object_put(o);
	return done(w, "plan.json", f, err);
}

static int write_containerfile(const struct writing *w)
{
	FILE *f = create(w, "Containerfile");

	if (!f)
		return -EIO;
	fprintf(f,
		"# The image of every node: Debian 12 with what 'twinlab up "
		"--node' calls\n# (iproute2's kernel interfaces, iptables for "
		"the delay line) and the\n# libraries twinlab is linked with; "
		"twinlab itself is bound in from the host\n# (%s, 'make "
		"install').\n#   docker build -t %s -f Containerfile .\n"
		"FROM debian:12\n"
		"RUN apt-get update && apt-get install -y --no-install-recommends "
		"\\\n"
		"      iproute2 iptables iputils-ping libglpk40 libjson-c5 "
		"libmetis5 \\\n"
		"      libmicrohttpd12 libmnl0 libnetfilter-queue1 libsqlite3-0 "
		"libyaml-0-2 \\\n"
		" && rm -rf /var/lib/apt/lists/*\n"
		"CMD [\"sleep\", \"infinity\"]\n",
		EXPORT_TWINLAB, w->o->image);
	return done(w, "Containerfile", f, ferror(f) ? -EIO : 0);
}

static int write_readme(const struct writing *w)
{
	const struct partition *pt = w->c->pt;
	FILE *f = create(w, "README.md");

	if (!f)
		return -EIO;
	fprintf(f, "# %s on %d host%s (containerlab)\n\n", w->o->lab,
		pt->nhosts, pt->nhosts > 1 ? "s" : "");
	fprintf(f,
		"Written by `twinlab export` (scheduler %s, dilation %g). "
		"Each ROADM site (its\nROADM, routers, servers) is whole on "
		"one host; %d lit wavelength%s cross%s\nbetween hosts as "
		"VXLAN tunnels (UDP %d, one VNI per wavelength).\n\n",
		w->o->scheduler, w->o->dilation, pt->ntunnels / 2,
		pt->ntunnels / 2 == 1 ? "" : "s",
		pt->ntunnels / 2 == 1 ? "es" : "", CLAB_VXLAN_PORT);
	fprintf(f,
		"On each host, as root:\n\n"
		"1. `make install` twinlab (the nodes bind %s);\n"
		"2. `docker build -t %s -f Containerfile .`;\n"
		"3. hosts joined by tunnels carry %d-byte frames over their "
		"underlay (the\n   links' MTU %d plus VXLAN's %d bytes): "
		"raise the underlay's MTU to %d,\n   else packets of the "
		"emulated links are dropped;\n"
		"4. `containerlab deploy -t %s-h<k>.clab.yml` with k its "
		"number (the\n   addresses the tunnels use are in the files' "
		"`remote:` keys).\n\n",
		EXPORT_TWINLAB, w->o->image,
		CLAB_MTU + CLAB_VXLAN_OVERHEAD, CLAB_MTU, CLAB_VXLAN_OVERHEAD,
		CLAB_MTU + CLAB_VXLAN_OVERHEAD, w->o->lab);
	fprintf(f,
		"Every node starts with `twinlab up /twinlab/scenario.yaml "
		"--node NAME`, which\nmakes its addresses, shapers, routes, "
		"cross-connects and delay line as a\nwhole `twinlab up` does. "
		"On Kubernetes (clabernetes), export for one host and\n"
		"`containerlab --runtime c9s deploy -t <file>`: clabernetes "
		"spreads the nodes\nitself (an image with twinlab inside "
		"replaces the bind of the host's binary).\n\n"
		"The federated-learning workers are started by `twinlab run "
		"--workers-via\n'docker exec -i clab-%s-{node} "
		"/twinlab/twinlab worker'` (or\n`containerlab exec`): one "
		"`twinlab worker` in each server's container per\nmodel, "
		"speaking to the run over that command's stdin and stdout, "
		"its clock\nmatched to the run's; `--agents-via '... "
		"/twinlab/twinlab agent --prefix\n{prefix}'` reads each "
		"node's counters and delay line the same way, and\n"
		"`--deployed --dilation %g --prefix %s --scheduler %s` "
		"runs on this\ndeployment without building anything.\n\n"
		"`plan.json` holds the plan, every "
		"transfer's addresses and the split\n(`split`: each host's "
		"sites and workers, the tunnels, beside a naive split).\n",
		w->o->lab, w->o->dilation, w->o->prefix, w->o->scheduler);
	return done(w, "README.md", f, ferror(f) ? -EIO : 0);
}

/* Remove what was written into tmp, and tmp. */
static void unwind(const char *tmp, struct json_object *files)
{
	char path[1400];

	for (size_t i = 0; i < json_object_array_length(files); i++) {
		snprintf(path, sizeof(path), "%.1100s/%.250s", tmp,
			 json_object_get_string(
				 json_object_array_get_idx(files, i)));
		unlink(path);
	}
	rmdir(tmp);
}

/* DIR: absent, or an empty directory. 0, or 1 (said). */
static int target_ok(const char *dir)
{
	struct stat sb;
	DIR *d;
	struct dirent *e;
	bool empty = true;

	if (lstat(dir, &sb)) {
		if (errno == ENOENT)
			return 0;
		p_err("cannot use '%s': %s", dir, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		p_err("'%s' exists and is not a directory", dir);
		return 1;
	}
	d = opendir(dir);
	if (!d) {
		p_err("cannot read '%s': %s", dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	if (!empty) {
		p_err("'%s' is not empty: export writes into a new or empty "
		      "directory", dir);
		return 1;
	}
	return 0;
}

static int write_all(struct writing *w, const char *dir,
		     const struct partition *naive)
{
	char tmpl[1100], *parent, copy[1030];
	int err;

	snprintf(copy, sizeof(copy), "%s", dir);
	parent = dirname(copy);
	snprintf(tmpl, sizeof(tmpl), "%.1030s/.twinlab-export-XXXXXX", parent);
	if (!mkdtemp(tmpl)) {
		p_err("cannot create a directory in '%s': %s", parent,
		      strerror(errno));
		return 1;
	}
	w->tmp = tmpl;
	err = write_hosts(w);
	if (!err)
		err = write_scenario(w);
	if (!err)
		err = write_plan(w, naive);
	if (!err)
		err = write_containerfile(w);
	if (!err)
		err = write_readme(w);
	if (!err && chmod(tmpl, 0755))
		err = -errno;
	/* an empty DIR is replaced; a DIR made meanwhile is not */
	if (!err && rmdir(dir) && errno != ENOENT) {
		err = -errno;
		p_err("cannot replace '%s': %s", dir, strerror(-err));
	}
	if (!err && rename(tmpl, dir)) {
		err = -errno;
		p_err("cannot move the files to '%s': %s", dir, strerror(-err));
	}
	if (err)
		unwind(tmpl, w->files);
	return err ? 1 : 0;
}

static int prefix_ok(const char *prefix, int nnodes)
{
	char longest[32];

	lab_part_prefix(prefix, nnodes - 1, longest, sizeof(longest));
	if (!lab_prefix_ok(longest)) {
		p_err("bad prefix '%s': node prefixes (%s ... %s) must be 1-%d "
		      "characters of [a-z0-9] starting with a letter", prefix,
		      prefix, longest, LAB_PREFIX_MAX);
		return EXIT_USAGE;
	}
	return 0;
}

static void say(const struct clab *c, const char *dir, FILE *f)
{
	const struct partition *pt = c->pt;

	fprintf(f, "exported '%s' to %s: %d host%s, %d namespaces, %d links "
		"(%d tunnel ends)\n", c->p->sc->name, dir, pt->nhosts,
		pt->nhosts > 1 ? "s" : "", c->p->sc->nnodes, c->nlinks,
		pt->ntunnels);
	for (int h = 0; h < pt->nhosts; h++)
		fprintf(f, "  host %d: %d namespaces, %ld workers\n", h + 1,
			pt->namespaces[h], pt->workers[h]);
}

int cmd_export(int argc, char **argv)
{
	const struct sched_ops *ops = &sched_mst;
	struct clab_opts o = { .image = EXPORT_IMAGE, .twinlab = EXPORT_TWINLAB,
			       .dilation = 1 };
	struct partition part = { 0 }, naive = { 0 };
	struct clab c = { 0 };
	struct cli cl = { 0 };
	struct scenario *sc = NULL;
	struct plan *p = NULL;
	uint32_t *underlay = NULL;
	const char *dir, *hosts_file;
	uint64_t hosts = 0;
	int rc, n = 1, err;
	char why[512];
	bool json;

	rc = cli_parse(&cl, argc, argv, 1, 1, EXPORT_HELP, prog,
		       PART_HOSTS_MAX, LAB_DILATION_MAX, LAB_PREFIX_MAX);
	if (rc != CLI_GO)
		return rc;
	o.prefix = "tl";
	if (cli_sched(&cl, &ops) || cli_prefix(&cl, &o.prefix) ||
	    cli_uint(&cl, "hosts", 1, PART_HOSTS_MAX, &hosts) ||
	    cli_real(&cl, "dilation", 1, LAB_DILATION_MAX, &o.dilation))
		return EXIT_USAGE;
	dir = cli_str(&cl, "containerlab", NULL);
	hosts_file = cli_str(&cl, "hosts-file", NULL);
	o.image = cli_str(&cl, "image", EXPORT_IMAGE);
	json = cli_flag(&cl, "json");
	o.scheduler = ops->name;
	if (!dir) {
		p_err("say where the files go: --containerlab DIR");
		return EXIT_USAGE;
	}
	if (strlen(dir) > 1024) {
		p_err("--containerlab: a path of at most 1024 bytes");
		return EXIT_USAGE;
	}
	if (hosts && hosts_file) {
		p_err("--hosts and --hosts-file both say how many hosts: give "
		      "one");
		return EXIT_USAGE;
	}
	if (!*o.image || strchr(o.image, '\n')) {
		p_err("bad image name '%s'", o.image);
		return EXIT_USAGE;
	}
	if (target_ok(dir))
		return EXIT_USAGE;
	if (hosts_file && read_hosts(hosts_file, &underlay, &n))
		return EXIT_USAGE;
	if (!hosts_file) {
		n = hosts ? (int)hosts : 1;
		underlay = calloc((size_t)n, sizeof(*underlay));
		if (!underlay) {
			p_err("out of memory");
			return 1;
		}
		/* TEST-NET-1, to be replaced by the hosts' own */
		for (int h = 0; h < n; h++)
			underlay[h] = (192u << 24 | 2u << 8) + 1u + (uint32_t)h;
	}
	rc = plan_scenario(cl.argv[0], NULL, ops, &sc, &p);
	if (rc)
		goto out;
	rc = prefix_ok(o.prefix, sc->nnodes);
	if (rc)
		goto out;
	rc = 1;
	if (sc->nevents)
		p_err("warning: '%s' has %d events: the files build the network "
		      "at t = 0 and play none of them", sc->name, sc->nevents);
	for (int i = 0; i < p->ntasks; i++)
		if (p->tasks[i].blocked)
			p_err("warning: task '%s' is blocked and not built: %s",
			      p->tasks[i].task->name, p->tasks[i].why);
	o.lab = sc->name;
	err = partition_plan(p, n, false, &part, why, sizeof(why));
	if (!err)
		err = partition_plan(p, n, true, &naive, why, sizeof(why));
	if (err) {
		p_err("cannot split '%s' over %d host%s: %s", sc->name, n,
		      n > 1 ? "s" : "", why);
		rc = err == -EINVAL ? EXIT_USAGE : 1;
		goto out;
	}
	if (clab_build(p, &part, underlay, &c)) {
		p_err("out of memory");
		goto out;
	}
	err = clab_check(&c, why, sizeof(why));
	if (err) {
		p_err("cannot export '%s': %s", sc->name, why);
		rc = EXIT_USAGE;
		goto out;
	}
	{
		struct writing w = { &c, &o, cl.argv[0], NULL,
				     json_object_new_array() };

		if (!w.files) {
			p_err("out of memory");
			goto out;
		}
		rc = write_all(&w, dir, &naive);
		if (!rc && json) {
			struct json_object *j = json_object_new_object();

			rc = !j || json_add_str(j, "scenario", sc->name) ||
			     json_add_str(j, "directory", dir) ||
			     json_add(j, "files", json_object_get(w.files)) ||
			     json_add(j, "split", hosts_json(p, &part, &naive)) ||
			     json_add(j, "links", json_object_new_int(c.nlinks)) ||
			     json_print(j);
			json_object_put(j);
		} else if (!rc)
			say(&c, dir, stdout);
		json_object_put(w.files);
	}
out:
	clab_release(&c);
	partition_release(&part);
	partition_release(&naive);
	free(underlay);
	plan_free(p);
	scenario_free(sc);
	return rc;
}
