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
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/lab.h"
#include "twin/scenario.h"

/* The change said as one JSON object: 0, or -errno. */
static int say_json(const char *what, const char *prefix,
		    const struct scenario *sc, int f, int lit)
{
	const struct scn_fibre *fb = &sc->fibres[f];
	const char *a = sc->nodes[fb->a].name, *b = sc->nodes[fb->b].name;
	struct json_object *o = json_object_new_object();
	bool ok = o && !json_add(o, "command", json_object_new_string(what)) &&
		  !json_add(o, "prefix", json_object_new_string(prefix)) &&
		  !json_add(o, "a", json_object_new_string(a)) &&
		  !json_add(o, "b", json_object_new_string(b)) &&
		  !json_add(o, "km", json_object_new_double(fb->km)) &&
		  !json_add(o, "lit_wavelengths", json_object_new_int(lit));

	int err = ok ? json_print(o) : -ENOMEM;

	json_object_put(o);
	return err;
}

/* The change itself, the prefix held. */
static int fibre_change(const char *prefix, char **names, bool up,
			const char *what, bool json, char *path, size_t plen)
{
	char err[512];
	struct scenario *sc;
	int a, b, f, n, e, nup, ndown;

	if (lab_state_get(prefix, "scenario", path, plen)) {
		p_err("prefix '%s' records no scenario: take it down and build "
		      "it again", prefix);
		return 1;
	}
	sc = load_scenario(path);
	if (!sc)
		return 1;
	a = scenario_find(sc, names[0]);
	b = scenario_find(sc, names[1]);
	for (int i = 0; i < 2; i++) {
		int x = i ? b : a;

		if (x < 0 || sc->nodes[x].kind != NODE_ROADM) {
			p_err("'%s' is not a ROADM of '%s' (%s)",
			      names[i], sc->name, path);
			scenario_free(sc);
			return EXIT_USAGE;
		}
	}
	f = scenario_fibre(sc, a, b);
	if (f < 0) {
		p_err("no fibre joins '%s' and '%s' in '%s'", names[0],
		      names[1], sc->name);
		scenario_free(sc);
		return EXIT_USAGE;
	}
	/* the story a cut and a repair tell, as an events file's */
	e = lab_fibre_state(prefix, sc, f, &nup, &ndown, err, sizeof(err));
	if (!e && up && nup && !ndown) {
		p_err("fibre %s-%s in prefix '%s' is not cut: nothing to "
		      "repair",
		      sc->nodes[a].name, sc->nodes[b].name, prefix);
		scenario_free(sc);
		return 1;
	}
	if (!e && !up && ndown && !nup) {
		p_err("fibre %s-%s in prefix '%s' is already cut ('%s repair "
		      "%s %s --prefix %s' brings it back)",
		      sc->nodes[a].name, sc->nodes[b].name, prefix, prog,
		      sc->nodes[a].name, sc->nodes[b].name, prefix);
		scenario_free(sc);
		return 1;
	}
	if (!e)
		e = lab_fibre_set(prefix, sc, f, up, &n, err, sizeof(err));
	if (e) {
		p_err("%s", err);
		scenario_free(sc);
		return 1;
	}
	if (json && say_json(what, prefix, sc, f, n / 2)) {
		p_err("%s: fibre %s-%s done, but its JSON not written", what,
		      sc->nodes[a].name, sc->nodes[b].name);
		scenario_free(sc);
		return 1;
	}
	if (!json)
		printf("%s: fibre %s-%s (%g km) in prefix '%s': %d lit "
		       "wavelength%s %s\n", what, sc->nodes[a].name,
		       sc->nodes[b].name, sc->fibres[f].km, prefix, n / 2,
		       n / 2 == 1 ? "" : "s", up ? "up again" : "down");
	scenario_free(sc);
	return 0;
}

static int fibre_cmd(int argc, char **argv, bool up)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *prefix = "tl", *what = up ? "repair" : "cut";
	char path[1024], err[512];
	bool json = false;
	int c, lock, rc;

	while ((c = getopt_long(argc, argv, "p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			prefix = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: %s %s ROADM ROADM [--prefix P] [--json]"
			       "\n\n%s the fibre between two ROADMs of the "
			       "emulation that is up:\nevery wavelength lit on "
			       "it %s at both ends. Needs root.\n\n"
			       "  --prefix P  the emulation's prefix (default "
			       "'tl')\n"
			       "  --json      say the fibre and the wavelengths "
			       "changed as JSON\n", prog, what,
			       up ? "Repairs" : "Cuts",
			       up ? "comes back up" : "goes down");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		p_err("usage: %s %s ROADM ROADM [--prefix P] [--json]", prog,
		      what);
		return EXIT_USAGE;
	}
	if (!prefix_arg(prefix)) {
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		p_err("'%s' needs root: it changes links in the emulation's "
		      "namespaces", what);
		return 1;
	}
	/*
	 * The prefix's one owner for the change: a run that owns it plays
	 * its own cuts and records them; one made behind its back would be
	 * measured as TCP's trouble.
	 */
	lock = lab_lock(prefix, up ? "twinlab repair" : "twinlab cut", err,
			sizeof(err));
	if (lock < 0) {
		p_err("%s", err);
		return 1;
	}
	if (!lab_exists(prefix)) {
		lab_unlock(prefix, lock);
		p_err("prefix '%s' is not up ('twinlab up' builds it)", prefix);
		return 1;
	}
	rc = fibre_change(prefix, argv + optind, up, what, json, path,
			  sizeof(path));
	lab_unlock(prefix, lock);
	return rc;
}

int cmd_cut(int argc, char **argv)
{
	return fibre_cmd(argc, argv, false);
}

int cmd_repair(int argc, char **argv)
{
	return fibre_cmd(argc, argv, true);
}
