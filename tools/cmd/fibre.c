// SPDX-License-Identifier: MIT
/*
 * twinlab cut A B / twinlab repair A B: take every lit wavelength of the
 * fibre between ROADMs A and B of a running emulation down, or up again,
 * at both ends at once — a fibre cut to watch, by hand, while a run or a
 * ping goes on. The fibre is found in the scenario the prefix was built
 * from (its state file, read as input); only the prefix's own namespaces
 * are touched. The twin's view of a cut is `twinlab plan --events`.
 */
#include "tools/twinlab.h"
#include "tools/json.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/lab.h"
#include "twin/scenario.h"

/* The change said as one JSON object: 0, or -errno. */
static int say_json(const char *what, const char *prefix,
		    const struct fibre_done *d)
{
	struct json_object *o = json_object_new_object();
	bool ok = o && !json_add(o, "command", json_object_new_string(what)) &&
		  !json_add(o, "prefix", json_object_new_string(prefix)) &&
		  !json_add(o, "a", json_object_new_string(d->a)) &&
		  !json_add(o, "b", json_object_new_string(d->b)) &&
		  !json_add(o, "km", json_object_new_double(d->km)) &&
		  !json_add(o, "lit_wavelengths", json_object_new_int(d->lit));

	int err = ok ? json_print(o) : -ENOMEM;

	json_object_put(o);
	return err;
}

/* The change itself, the prefix held; why in msg. 0 or an exit status. */
static int fibre_change(const char *prefix, const char *const names[2], bool up,
			struct fibre_done *d, char *msg, size_t len)
{
	char err[512], path[1024];
	struct scn_error se;
	struct scenario *sc;
	int a, b, f, n, e, nup, ndown, rc = 1;

	if (lab_state_get(prefix, "scenario", path, sizeof(path))) {
		snprintf(msg, len,
			 "prefix '%s' records no scenario: take it "
			 "down and build it again",
			 prefix);
		return 1;
	}
	sc = scenario_load(path, &se);
	if (!sc) {
		if (se.line)
			snprintf(msg, len, "%s:%d:%d: %s", se.file, se.line,
				 se.col, se.msg);
		else
			snprintf(msg, len, "%s: %s", se.file, se.msg);
		return EXIT_USAGE;
	}
	a = scenario_find(sc, names[0]);
	b = scenario_find(sc, names[1]);
	for (int i = 0; i < 2; i++) {
		int x = i ? b : a;

		if (x < 0 || sc->nodes[x].kind != NODE_ROADM) {
			snprintf(msg, len, "'%s' is not a ROADM of '%s' (%s)",
				 names[i], sc->name, path);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	f = scenario_fibre(sc, a, b);
	if (f < 0) {
		snprintf(msg, len, "no fibre joins '%s' and '%s' in '%s'",
			 names[0], names[1], sc->name);
		rc = EXIT_USAGE;
		goto out;
	}
	snprintf(d->a, sizeof(d->a), "%s", sc->nodes[a].name);
	snprintf(d->b, sizeof(d->b), "%s", sc->nodes[b].name);
	d->km = sc->fibres[f].km;
	/* the story a cut and a repair tell, as an events file's */
	e = lab_fibre_state(prefix, sc, f, &nup, &ndown, err, sizeof(err));
	if (!e && up && nup && !ndown) {
		snprintf(msg, len,
			 "fibre %s-%s in prefix '%s' is not cut: "
			 "nothing to repair",
			 d->a, d->b, prefix);
		goto out;
	}
	if (!e && !up && ndown && !nup) {
		snprintf(msg, len,
			 "fibre %s-%s in prefix '%s' is already cut "
			 "('%s repair %s %s --prefix %s' brings it back)",
			 d->a, d->b, prefix, prog, d->a, d->b, prefix);
		goto out;
	}
	if (!e)
		e = lab_fibre_set(prefix, sc, f, up, &n, err, sizeof(err));
	if (e) {
		snprintf(msg, len, "%s", err);
		goto out;
	}
	d->lit = n / 2;
	snprintf(msg, len,
		 "%s: fibre %s-%s (%g km) in prefix '%s': %d lit "
		 "wavelength%s %s",
		 up ? "repair" : "cut", d->a, d->b, d->km, prefix, d->lit,
		 d->lit == 1 ? "" : "s", up ? "up again" : "down");
	rc = 0;
out:
	scenario_free(sc);
	return rc;
}

int fibre_apply(const char *prefix, const char *a, const char *b, bool up,
		const char *who, bool owned, struct fibre_done *d, char *msg,
		size_t len)
{
	const char *const names[2] = {a, b};
	char err[512], part[64];
	int lock, rc;

	memset(d, 0, sizeof(*d));
	if (geteuid() != 0) {
		snprintf(msg, len,
			 "'%s' needs root: it changes links in the "
			 "emulation's namespaces",
			 up ? "repair" : "cut");
		return 1;
	}
	/*
	 * The prefix's one owner for the change: a run that owns it plays
	 * its own cuts and records them; one made behind its back would be
	 * measured as TCP's trouble.
	 */
	/* (a caller that owns it already takes no second lock: closing
	 * one would let go of the process's own; lab_unlock passes over
	 * the -1 it has then) */
	lock = owned ? -1 : lab_lock(prefix, who, err, sizeof(err));
	if (!owned && lock < 0) {
		snprintf(msg, len, "%s", err);
		return 1;
	}
	if (!lab_exists(prefix)) {
		lab_unlock(prefix, lock);
		snprintf(msg, len,
			 "prefix '%s' is not up ('twinlab up' builds "
			 "it)",
			 prefix);
		return 1;
	}
	if (!lab_state_get(prefix, "part", part, sizeof(part))) {
		lab_unlock(prefix, lock);
		snprintf(msg, len, "prefix '%s' holds node %s's part of an "
			 "emulation only ('up --node'): cut and repair change "
			 "a whole one", prefix, part);
		return 1;
	}
	rc = fibre_change(prefix, names, up, d, msg, len);
	lab_unlock(prefix, lock);
	return rc;
}

#define FIBRE_HELP \
	"usage: %s %s ROADM ROADM [--prefix P] [--json]\n\n" \
	"%s the fibre between two ROADMs of the emulation that is up:\n" \
	"every wavelength lit on it %s at both ends. Needs root.\n\n" \
	CLI_PREFIX_HELP \
	"  -j, --json        say the fibre and the wavelengths changed as " \
	"JSON\n"

static int fibre_cmd(int argc, char **argv, bool up)
{
	const char *prefix = NULL, *what = up ? "repair" : "cut";
	struct fibre_done d;
	char msg[1024];
	struct cli cl = { 0 };
	bool json;
	int rc;

	rc = cli_parse(&cl, argc, argv, 2, 2, FIBRE_HELP, prog, what,
		       up ? "Repairs" : "Cuts",
		       up ? "comes back up" : "goes down");
	if (rc != CLI_GO)
		return rc;
	if (cli_prefix(&cl, &prefix))
		return EXIT_USAGE;
	json = cli_flag(&cl, "json");
	rc = fibre_apply(prefix, cl.argv[0], cl.argv[1], up,
			 up ? "twinlab repair" : "twinlab cut", false, &d, msg,
			 sizeof(msg));
	if (rc) {
		p_err("%s", msg);
		return rc;
	}
	if (json && say_json(what, prefix, &d)) {
		p_err("%s: fibre %s-%s done, but its JSON not written", what,
		      d.a, d.b);
		return 1;
	}
	if (!json)
		printf("%s\n", msg);
	return 0;
}

int cmd_cut(int argc, char **argv)
{
	return fibre_cmd(argc, argv, false);
}

int cmd_repair(int argc, char **argv)
{
	return fibre_cmd(argc, argv, true);
}
