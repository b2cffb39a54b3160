// SPDX-License-Identifier: MIT
/*
 * Scenario loader tests. Every malformed case below is the small valid base
 * scenario with one thing changed, and must fail with the 1-based line of
 * the offending token and a message naming it; the positive tests pin the
 * defaults and the task order, and load every shipped scenario.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "twin/scenario.h"

/*
 * The base scenario, in pieces so that a case can swap one of them. The
 * comments give the lines each piece occupies in BASE; a case that appends
 * to BASE adds line 24, which is still inside the last task's mapping when
 * indented by four spaces, or a new top-level key when not indented.
 */
#define L_NAME "name: base\n"				/* 1 */
#define L_WLGBPS "wavelength_gbps: 100\n"		/* 2 */
#define L_WL "wavelengths: 8\n"				/* 3 */
#define L_DEMAND "demand_gbps: 10\n"			/* 4 */
#define L_ROADMS "roadms: [A, B, C]\n"			/* 5 */
#define L_FIBRES					/* 6-8 */	\
	"fibres:\n"							\
	"  - {a: A, b: B, km: 100}\n"					\
	"  - {a: B, b: C, km: 50, wavelengths: 4}\n"
#define L_ROUTERS					/* 9-12 */	\
	"routers:\n"							\
	"  - {name: r1, roadm: A}\n"					\
	"  - {name: r2, roadm: B}\n"					\
	"  - {name: r3, roadm: C}\n"
#define L_SERVERS_HEAD "servers:\n"			/* 13 */
#define L_S1						/* 14 */	\
	"  - {name: s1, router: r1, access_gbps: 100, cpu: 1, "		\
	"memory_mib: 512}\n"
#define L_S2						/* 15 */	\
	"  - {name: s2, router: r2, access_gbps: 100, cpu: 1, "		\
	"memory_mib: 512}\n"
#define L_S3						/* 16 */	\
	"  - {name: s3, router: r3, access_gbps: 40, cpu: 2, "		\
	"memory_mib: 1024}\n"
#define L_TASKS_HEAD "tasks:\n"				/* 17 */
#define L_TNAME "  - name: t1\n"			/* 18 */
#define L_TGLOBAL "    global: s1\n"			/* 19 */
#define L_TLOCALS "    locals: [s2, s3]\n"		/* 20 */
#define L_TPARAMS "    parameters: 1000\n"		/* 21 */
#define L_TBPP "    bytes_per_parameter: 4\n"		/* 22 */
#define L_TWORK "    work_core_s: 0.5\n"		/* 23 */

#define L_CAPS L_WLGBPS L_WL L_DEMAND			/* 2-4 */
#define L_SERVERS L_SERVERS_HEAD L_S1 L_S2 L_S3		/* 13-16 */
#define L_TASK_REST L_TPARAMS L_TBPP L_TWORK		/* 21-23 */
#define L_TASKS L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS L_TASK_REST

#define HEAD L_NAME L_CAPS L_ROADMS			/* 1-5 */
#define NET HEAD L_FIBRES L_ROUTERS L_SERVERS		/* 1-16 */
#define BASE NET L_TASKS				/* 1-23 */

/* The same network with the task's lines 18-20 given by the case. */
#define TASK(name_global_locals) \
	NET L_TASKS_HEAD name_global_locals L_TASK_REST

struct bad_case {
	const char *name;
	const char *yaml;
	int line;
	const char *fragment;
};

static const struct bad_case bad_cases[] = {
	/* YAML itself */
	{ "yaml_syntax", L_NAME "wavelength_gbps: 100\nwavelengths: 8: 9\n",
	  3, "YAML: mapping values are not allowed" },
	{ "yaml_tab", L_NAME "\twavelength_gbps: 100\n", 2,
	  "YAML: found a tab character that violates indentation" },
	{ "yaml_bad_token", L_NAME "@wavelength_gbps: 100\n", 2,
	  "YAML: found character that cannot start any token" },
	{ "yaml_unclosed_flow", L_NAME L_CAPS "roadms: [A, B\nfibres: []\n",
	  6, "YAML: did not find expected ',' or ']'" },
	{ "yaml_undefined_alias", L_NAME L_CAPS "roadms: *nodes\n", 5,
	  "YAML: found undefined alias" },
	{ "yaml_trailing_garbage", BASE "]\n", 24, "YAML: " },
	{ "yaml_second_document", BASE "---\nname: other\n", 24,
	  "one YAML document" },
	{ "empty", "", 1, "empty scenario" },
	{ "only_comments", "# nothing here\n\n", 1, "empty scenario" },
	{ "top_list", "- name: base\n", 1,
	  "the scenario must be a mapping, not a list" },
	{ "top_scalar", "\nbase\n", 2,
	  "the scenario must be a mapping, not a scalar" },
	{ "key_not_scalar", BASE "[x, y]: 1\n", 24,
	  "keys of the scenario must be scalars" },

	/* keys */
	{ "unknown_top_key", BASE "colour: red\n", 24,
	  "unknown key 'colour' in the scenario" },
	{ "unknown_fibre_key",
	  HEAD "fibres:\n  - {a: A, b: B, km: 100}\n"
	  "  - {a: B, b: C, kms: 50}\n" L_ROUTERS L_SERVERS L_TASKS,
	  8, "unknown key 'kms' in a fibre" },
	{ "unknown_router_key",
	  HEAD L_FIBRES "routers:\n  - {name: r1, roadm: A, ports: 4}\n",
	  10, "unknown key 'ports' in a router" },
	{ "unknown_server_key",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: s1, router: r1, access_gbps: 1, cpu: 1, gpu: 1}\n",
	  14, "unknown key 'gpu' in a server" },
	{ "unknown_task_key", BASE "    epochs: 3\n", 24,
	  "unknown key 'epochs' in a task" },
	{ "unknown_weights_key", BASE "weights:\n  alpha: 1\n  gamma: 2\n", 26,
	  "unknown key 'gamma' in 'weights'" },
	{ "duplicate_top_key", BASE "name: again\n", 24,
	  "duplicate key 'name' in the scenario" },
	{ "duplicate_task_key", BASE "    parameters: 5\n", 24,
	  "duplicate key 'parameters' in a task" },
	{ "duplicate_fibre_key",
	  HEAD "fibres:\n  - {a: A, b: B, a: C, km: 1}\n", 7,
	  "duplicate key 'a' in a fibre" },
	{ "missing_name", L_CAPS L_ROADMS, 1,
	  "the scenario lacks required key 'name'" },
	{ "missing_wavelength_gbps", L_NAME L_WL L_DEMAND L_ROADMS, 1,
	  "lacks required key 'wavelength_gbps'" },
	{ "missing_wavelengths", L_NAME L_WLGBPS L_DEMAND L_ROADMS, 1,
	  "lacks required key 'wavelengths'" },
	{ "missing_demand", L_NAME L_WLGBPS L_WL L_ROADMS, 1,
	  "lacks required key 'demand_gbps'" },
	{ "missing_roadms", L_NAME L_CAPS, 1,
	  "lacks required key 'roadms'" },
	{ "missing_fibre_km", HEAD "fibres:\n  - {a: A, b: B}\n", 7,
	  "a fibre lacks required key 'km'" },
	{ "missing_router_roadm", HEAD "routers:\n  - {name: r1}\n", 7,
	  "a router lacks required key 'roadm'" },
	{ "missing_server_cpu",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: s1, router: r1, access_gbps: 100, memory_mib: 5}\n",
	  14, "a server lacks required key 'cpu'" },
	{ "missing_task_locals", TASK(L_TNAME L_TGLOBAL "    rounds: 2\n"),
	  18, "a task lacks required key 'locals'" },
	{ "missing_task_global", TASK(L_TNAME "    rounds: 2\n" L_TLOCALS),
	  18, "a task lacks required key 'global'" },
	{ "missing_task_work", NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS
	  L_TPARAMS L_TBPP, 18, "a task lacks required key 'work_core_s'" },

	/* types */
	{ "name_list", "name: [a, b]\n" L_CAPS L_ROADMS, 1,
	  "'name' must be a scalar, not a list" },
	{ "km_list", HEAD "fibres:\n  - {a: A, b: B, km: [1]}\n", 7,
	  "'km' must be a scalar, not a list" },
	{ "cpu_mapping",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: s1, router: r1, access_gbps: 1, cpu: {n: 1},\n"
	  "     memory_mib: 5}\n",
	  14, "'cpu' must be a scalar, not a mapping" },
	{ "roadms_scalar", L_NAME L_CAPS "roadms: A\n", 5,
	  "'roadms' must be a list, not a scalar" },
	{ "roadms_mapping", L_NAME L_CAPS "roadms: {A: 1}\n", 5,
	  "'roadms' must be a list, not a mapping" },
	{ "roadms_empty", L_NAME L_CAPS "roadms: []\n", 5,
	  "'roadms' must list at least one ROADM" },
	{ "roadm_list", L_NAME L_CAPS "roadms: [A, [B]]\n", 5,
	  "'roadms' must be a scalar, not a list" },
	{ "fibres_mapping", HEAD "fibres: {a: A, b: B, km: 1}\n", 6,
	  "'fibres' must be a list, not a mapping" },
	{ "fibre_scalar", HEAD "fibres:\n  - A-B\n", 7,
	  "a fibre must be a mapping, not a scalar" },
	{ "servers_null", HEAD "servers:\n", 6,
	  "'servers' must be a list, not a scalar" },
	{ "locals_scalar", TASK(L_TNAME L_TGLOBAL "    locals: s2\n"), 20,
	  "'locals' must be a list, not a scalar" },
	{ "local_mapping",
	  TASK(L_TNAME L_TGLOBAL "    locals: [s2, {s3: 1}]\n"), 20,
	  "'locals' must be a scalar, not a mapping" },
	/* the data's split: lines 18-20, then 21-23, then the case's 24- */
	{ "split_below_locals", BASE "    split_over: 1\n", 24,
	  "'split_over' 1 is fewer than its 2 local models" },
	{ "shares_without_split", BASE "    shares: [0, 1]\n", 24,
	  "'shares' needs 'split_over'" },
	{ "shares_count", BASE "    split_over: 5\n    shares: [0]\n", 25,
	  "'shares' lists 1, one per local model (2)" },
	{ "share_out_of_range",
	  BASE "    split_over: 5\n    shares: [0, 5]\n", 25,
	  "a share is a whole number in [0, 5), got '5'" },
	{ "share_negative",
	  BASE "    split_over: 5\n    shares: [-1, 2]\n", 25,
	  "a share is a whole number in [0, 5), got '-1'" },
	{ "share_twice", BASE "    split_over: 5\n    shares: [3, 3]\n", 25,
	  "share 3 held twice" },
	{ "tasks_mapping", NET "tasks: {t1: 1}\n", 17,
	  "'tasks' must be a list, not a mapping" },
	{ "weights_list", BASE "weights: [1, 2]\n", 24,
	  "'weights' must be a mapping, not a list" },

	/* numbers */
	{ "km_text", HEAD "fibres:\n  - {a: A, b: B, km: far}\n", 7,
	  "'km' must be a finite number, got 'far'" },
	{ "km_negative", HEAD "fibres:\n  - {a: A, b: B, km: -5}\n", 7,
	  "'km' must be > 0, got '-5'" },
	{ "km_zero", HEAD "fibres:\n  - {a: A, b: B, km: 0}\n", 7,
	  "'km' must be > 0, got '0'" },
	{ "loss_negative", HEAD "fibres:\n  - {a: A, b: B, km: 5, "
	  "loss: -0.1}\n", 7, "'loss' must be >= 0, got '-0.1'" },
	{ "loss_too_high", HEAD "fibres:\n  - {a: A, b: B, km: 5, "
	  "loss: 0.5}\n", 7, "'loss' must be <= 0.1, got '0.5'" },
	{ "km_too_long", HEAD "fibres:\n  - {a: A, b: B, km: 1e6}\n", 7,
	  "'km' must be <= 100000, got '1e6'" },
	{ "wavelength_gbps_empty", L_NAME "wavelength_gbps:\n", 2,
	  "'wavelength_gbps' must be a finite number, got ''" },
	{ "wavelength_gbps_inf", L_NAME "wavelength_gbps: .inf\n", 2,
	  "'wavelength_gbps' must be a finite number, got '.inf'" },
	{ "wavelength_gbps_overflow", L_NAME "wavelength_gbps: 1e999\n", 2,
	  "'wavelength_gbps' must be a finite number, got '1e999'" },
	{ "cpu_nan",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: s1, router: r1, access_gbps: 1, cpu: .nan}\n",
	  14, "'cpu' must be a finite number, got '.nan'" },
	{ "cpu_zero",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: s1, router: r1, access_gbps: 1, cpu: 0}\n",
	  14, "'cpu' must be > 0, got '0'" },
	{ "memory_negative",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: s1, router: r1, memory_mib: -512}\n",
	  14, "'memory_mib' must be > 0, got '-512'" },
	{ "access_too_fast",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: s1, router: r1, access_gbps: 2e6}\n",
	  14, "'access_gbps' must be <= 1e+06, got '2e6'" },
	{ "access_km_negative",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: s1, router: r1, access_km: -1}\n",
	  14, "'access_km' must be >= 0, got '-1'" },
	{ "scale_zero", BASE "scale: 0\n", 24, "'scale' must be > 0, got '0'" },
	{ "seed_negative", BASE "seed: -1\n", 24,
	  "'seed' must be a non-negative integer, got '-1'" },
	{ "seed_space_negative", BASE "seed: \" -1\"\n", 24,
	  "'seed' must be a non-negative integer, got ' -1'" },
	{ "scale_hex", BASE "scale: 0x50\n", 24,
	  "'scale' must be a finite number, got '0x50'" },
	{ "seed_hex", BASE "seed: 0x10\n", 24,
	  "'seed' must be a non-negative integer, got '0x10'" },
	{ "seed_overflow", BASE "seed: 18446744073709551616\n", 24,
	  "'seed' must be a non-negative integer" },
	{ "wavelengths_zero", L_NAME L_WLGBPS "wavelengths: 0\n", 3,
	  "'wavelengths' must be > 0, got '0'" },
	{ "wavelengths_too_many", L_NAME L_WLGBPS "wavelengths: 4097\n", 3,
	  "'wavelengths' must be <= 4096, got '4097'" },
	{ "wavelengths_fraction", L_NAME L_WLGBPS "wavelengths: 2.5\n", 3,
	  "'wavelengths' must be a non-negative integer, got '2.5'" },
	{ "fibre_wavelengths_zero",
	  HEAD "fibres:\n  - {a: A, b: B, km: 1, wavelengths: 0}\n", 7,
	  "'wavelengths' must be > 0, got '0'" },
	{ "parameters_negative",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS
	  "    parameters: -1000\n" L_TBPP L_TWORK, 21,
	  "'parameters' must be a non-negative integer, got '-1000'" },
	{ "parameters_zero",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS
	  "    parameters: 0\n" L_TBPP L_TWORK, 21,
	  "'parameters' must be > 0, got '0'" },
	{ "parameters_too_many",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS
	  "    parameters: 1000000000001\n" L_TBPP L_TWORK, 21,
	  "'parameters' must be <= 1000000000000, got '1000000000001'" },
	{ "parameters_beyond_the_emulated_model",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS
	  "    parameters: 1000000000000\n" L_TBPP L_TWORK, 21,
	  "task 't1': the emulated model (parameters / scale = 1e+12) is "
	  "too large: at most 2.15e+10 parameters" },
	{ "bytes_per_parameter_without_wire_format",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS L_TPARAMS
	  "    bytes_per_parameter: 3\n" L_TWORK, 22,
	  "task 't1': 'bytes_per_parameter' must be 1, 2, 4 or 8" },
	{ "bytes_per_parameter_zero",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS L_TPARAMS
	  "    bytes_per_parameter: 0\n" L_TWORK, 22,
	  "'bytes_per_parameter' must be > 0, got '0'" },
	{ "bytes_per_parameter_17",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS L_TPARAMS
	  "    bytes_per_parameter: 17\n" L_TWORK, 22,
	  "'bytes_per_parameter' must be <= 16, got '17'" },
	{ "work_negative",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS L_TPARAMS L_TBPP
	  "    work_core_s: -0.5\n", 23,
	  "'work_core_s' must be >= 0, got '-0.5'" },
	{ "agg_negative",
	  NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS L_TPARAMS L_TBPP L_TWORK
	  "    agg_core_s: -1e-3\n", 24,
	  "'agg_core_s' must be >= 0, got '-1e-3'" },
	{ "rounds_zero", BASE "    rounds: 0\n", 24,
	  "'rounds' must be > 0, got '0'" },
	{ "arrival_negative", BASE "    arrival: -1\n", 24,
	  "'arrival' must be a non-negative integer, got '-1'" },
	{ "reuse_above_one", BASE "weights:\n  reuse: 1.5\n", 25,
	  "'reuse' must be <= 1, got '1.5'" },
	{ "alpha_negative", BASE "weights: {alpha: -1}\n", 24,
	  "'alpha' must be >= 0, got '-1'" },
	{ "relay_unknown", BASE "relay: cut-through\n", 24,
	  "'relay' must be 'store' or 'pipelined', got 'cut-through'" },
	{ "chunk_zero", BASE "chunk_kb: 0\n", 24,
	  "'chunk_kb' must be > 0, got '0'" },
	{ "never_slower_not_bool", BASE "never_slower: yes\n", 24,
	  "'never_slower' must be true or false, got 'yes'" },
	{ "stretch_below_one", BASE "weights: {stretch: 0.5}\n", 24,
	  "'stretch' must be 0 (no bound) or at least 1, got 0.5" },
	{ "stretch_negative", BASE "weights: {stretch: -1}\n", 24,
	  "'stretch' must be" },

	/* references */
	{ "router_roadm_dangling",
	  HEAD L_FIBRES "routers:\n  - {name: r1, roadm: Z}\n", 10,
	  "'roadm' names unknown roadm 'Z'" },
	{ "router_roadm_wrong_kind",
	  HEAD L_FIBRES "routers:\n  - {name: r1, roadm: A}\n"
	  "  - {name: r2, roadm: r1}\n", 11,
	  "'roadm' must name a roadm, but 'r1' is a router" },
	{ "server_router_dangling",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD L_S1 L_S2
	  "  - {name: s3, router: r9, access_gbps: 1, cpu: 1, "
	  "memory_mib: 1}\n", 16, "'router' names unknown router 'r9'" },
	{ "server_router_wrong_kind",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD L_S1 L_S2
	  "  - {name: s3, router: s2, access_gbps: 1, cpu: 1, "
	  "memory_mib: 1}\n", 16,
	  "'router' must name a router, but 's2' is a server" },
	{ "fibre_end_dangling",
	  HEAD "fibres:\n  - {a: A, b: B, km: 1}\n  - {a: B, b: Q, km: 1}\n",
	  8, "'b' names unknown roadm 'Q'" },
	{ "fibre_end_router",
	  HEAD "fibres:\n  - {a: r2, b: A, km: 1}\n" L_ROUTERS, 7,
	  "'a' must name a roadm, but 'r2' is a router" },
	{ "task_global_dangling", TASK(L_TNAME "    global: s9\n" L_TLOCALS),
	  19, "'global' names unknown server 's9'" },
	{ "task_global_router", TASK(L_TNAME "    global: r1\n" L_TLOCALS),
	  19, "'global' must name a server, but 'r1' is a router" },
	{ "task_local_dangling",
	  TASK(L_TNAME L_TGLOBAL "    locals: [s2, s9]\n"), 20,
	  "'locals' names unknown server 's9'" },
	{ "task_local_roadm",
	  TASK(L_TNAME L_TGLOBAL "    locals: [s2, C]\n"), 20,
	  "'locals' must name a server, but 'C' is a roadm" },

	/* names */
	{ "node_name_across_kinds",
	  HEAD L_FIBRES "routers:\n  - {name: r1, roadm: A}\n"
	  "  - {name: B, roadm: B}\n", 11,
	  "duplicate node name 'B' (first declared as roadm at line 5)" },
	{ "server_name_twice",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD L_S1 L_S1, 15,
	  "duplicate node name 's1' (first declared as server at line 14)" },
	{ "roadm_name_twice", L_NAME L_CAPS "roadms: [A, B, A]\n", 5,
	  "duplicate node name 'A'" },
	{ "task_name_twice", BASE L_TNAME L_TGLOBAL L_TLOCALS L_TASK_REST, 24,
	  "duplicate task name 't1' (first at line 18)" },
	{ "node_name_12_chars", L_NAME L_CAPS "roadms: [A, ABCDEFGHIJKL]\n",
	  5, "bad roadm name 'ABCDEFGHIJKL'" },
	{ "node_name_slash",
	  HEAD L_FIBRES L_ROUTERS L_SERVERS_HEAD
	  "  - {name: a/b, router: r1, access_gbps: 1, cpu: 1, "
	  "memory_mib: 1}\n", 14, "bad server name 'a/b'" },
	{ "node_name_space",
	  HEAD L_FIBRES "routers:\n  - {name: r 1, roadm: A}\n", 10,
	  "bad router name 'r 1'" },
	{ "node_name_dot",
	  HEAD L_FIBRES "routers:\n  - {name: r.1, roadm: A}\n", 10,
	  "bad router name 'r.1'" },
	{ "node_name_leading_dash", L_NAME L_CAPS "roadms: [A, '-B']\n", 5,
	  "bad roadm name '-B'" },
	{ "node_name_trailing_dash", L_NAME L_CAPS "roadms: [A, B-]\n", 5,
	  "bad roadm name 'B-'" },
	{ "node_name_empty", L_NAME L_CAPS "roadms: [A, '']\n", 5,
	  "bad roadm name ''" },
	{ "task_name_slash",
	  TASK("  - name: t/1\n" L_TGLOBAL L_TLOCALS), 18,
	  "bad task name 't/1'" },
	{ "task_name_33_chars",
	  TASK("  - name: abcdefghijklmnopqrstuvwxyz0123456\n" L_TGLOBAL
	       L_TLOCALS), 18,
	  "bad task name 'abcdefghijklmnopqrstuvwxyz0123456'" },
	{ "scenario_name_space", L_CAPS "name: a b\n" L_ROADMS, 4,
	  "bad scenario name 'a b'" },
	{ "scenario_name_65_chars",
	  "name: abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
	  "0123456789012\n" L_CAPS L_ROADMS, 1,
	  "'name' is too long (at most 64 characters)" },

	/* network rules */
	{ "fibre_to_itself",
	  HEAD "fibres:\n  - {a: A, b: B, km: 1}\n  - {a: B, b: B, km: 1}\n",
	  8, "fibre joins ROADM 'B' to itself" },
	{ "fibre_twice", HEAD L_FIBRES "  - {a: A, b: B, km: 5}\n", 9,
	  "second fibre between 'A' and 'B' (first at line 7)" },
	{ "fibre_twice_reversed", HEAD L_FIBRES "  - {a: C, b: B, km: 5}\n",
	  9, "second fibre between 'C' and 'B' (first at line 8)" },
	{ "second_router_on_roadm",
	  HEAD L_FIBRES "routers:\n  - {name: r1, roadm: A}\n"
	  "  - {name: r2, roadm: B}\n  - {name: r3, roadm: B}\n", 12,
	  "ROADM 'B' already has router 'r2'" },
	{ "task_no_locals", TASK(L_TNAME L_TGLOBAL "    locals: []\n"), 20,
	  "task 't1' has no local models" },
	{ "task_local_is_global",
	  TASK(L_TNAME L_TGLOBAL "    locals: [s2, s1]\n"), 20,
	  "server 's1' holds the global model" },
	{ "task_local_twice",
	  TASK(L_TNAME L_TGLOBAL "    locals: [s2, s3, s2]\n"), 20,
	  "task 't1' lists server 's2' twice" },
	{ "task_local_unreachable",
	  L_NAME L_CAPS "roadms: [A, B, C, D]\n"
	  "fibres:\n  - {a: A, b: B, km: 100}\n  - {a: C, b: D, km: 50}\n"
	  L_ROUTERS L_SERVERS L_TASKS, 20,
	  "server 's3' is not reachable from global model server 's1'" },
	{ "demand_above_wavelength",
	  L_NAME L_WLGBPS L_WL "demand_gbps: 200\n" L_ROADMS, 4,
	  "'demand_gbps' (200) exceeds 'wavelength_gbps' (100)" },
	{ "task_demand_above_wavelength",
	  L_NAME "wavelength_gbps: 30\n" L_WL L_DEMAND L_ROADMS L_FIBRES
	  L_ROUTERS L_SERVERS L_TASKS "    demand_gbps: 35\n", 24,
	  "task 't1': demand 35 Gbit/s exceeds the wavelength capacity" },
	{ "task_demand_above_access", BASE "    demand_gbps: 50\n", 24,
	  "task 't1': demand 50 Gbit/s exceeds the access link of server "
	  "'s3' (40 Gbit/s)" },
	{ "task_default_demand_above_access",
	  L_NAME L_WLGBPS L_WL "demand_gbps: 50\n" L_ROADMS L_FIBRES
	  L_ROUTERS L_SERVERS L_TASKS, 18,
	  "demand 50 Gbit/s exceeds the access link of server 's3'" },
	{ "addressing_not_cidr", BASE "addressing: 10.0.0.0\n", 24,
	  "'addressing' must be an IPv4 network" },
	{ "addressing_host_bits", BASE "addressing: 10.0.0.1/8\n", 24,
	  "got '10.0.0.1/8'" },
	{ "addressing_slash_30", BASE "addressing: 10.0.0.0/30\n", 24,
	  "got '10.0.0.0/30'" },
	{ "addressing_bad_octet", BASE "addressing: 300.0.0.0/8\n", 24,
	  "got '300.0.0.0/8'" },
	{ "addressing_no_length", BASE "addressing: 10.0.0.0/\n", 24,
	  "got '10.0.0.0/'" },
	/* positions: where pictures draw the ROADMs */
	{ "positions_not_a_mapping", BASE "positions: [A, B]\n", 24,
	  "'positions' must map ROADM names to [x, y]" },
	{ "positions_unknown", BASE "positions:\n  Z: [0, 0]\n", 25,
	  "'positions' names unknown roadm 'Z'" },
	{ "positions_a_router", BASE "positions:\n  r1: [0, 0]\n", 25,
	  "'positions' must name a roadm, but 'r1' is a router" },
	{ "positions_twice", BASE "positions:\n  A: [0, 0]\n  A: [1, 1]\n",
	  26, "'positions' places ROADM 'A' twice" },
	{ "positions_one_number", BASE "positions:\n  A: [3]\n", 25,
	  "the position of 'A' must be [x, y], got 1 numbers" },
	{ "positions_not_a_number", BASE "positions:\n  A: [1, east]\n", 25,
	  "'positions' must be a finite number, got 'east'" },
	{ "positions_far", BASE "positions:\n  A: [1, 2e6]\n", 25,
	  "a position must be within +-1e+06, got 2e+06" },
};

#define NBAD (sizeof(bad_cases) / sizeof(bad_cases[0]))

static char *arena_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = cr_malloc(n);

	if (!p)
		abort();
	return memcpy(p, s, n);
}

static void free_bad_cases(struct criterion_test_params *crp)
{
	struct bad_case *p = crp->params;

	for (size_t i = 0; i < crp->length; i++) {
		cr_free((char *)p[i].name);
		cr_free((char *)p[i].yaml);
		cr_free((char *)p[i].fragment);
	}
	cr_free(p);
}

/*
 * Each case runs in a fresh process of this binary. Where BoxFort cannot
 * turn ASLR off (containers often forbid personality(2)), the child's
 * string literals are not where the parent's pointers say, so the cases
 * are copied into Criterion's shared arena, which is mapped alike in both.
 */
ParameterizedTestParameters(scenario, malformed)
{
	struct bad_case *p = cr_malloc(sizeof(bad_cases));

	if (!p)
		abort();
	for (size_t i = 0; i < NBAD; i++) {
		p[i] = bad_cases[i];
		p[i].name = arena_strdup(bad_cases[i].name);
		p[i].yaml = arena_strdup(bad_cases[i].yaml);
		p[i].fragment = arena_strdup(bad_cases[i].fragment);
	}
	return cr_make_param_array(struct bad_case, p, NBAD, free_bad_cases);
}

ParameterizedTest(struct bad_case *c, scenario, malformed)
{
	struct scn_error err;
	struct scenario *sc;

	errno = 0;
	sc = scenario_parse(c->yaml, strlen(c->yaml), c->name, &err);
	if (sc) {
		scenario_free(sc);
		cr_assert_fail("%s: loaded, expected line %d: %s", c->name,
			       c->line, c->fragment);
	}
	cr_assert_eq(errno, EINVAL, "%s: errno %d", c->name, errno);
	cr_assert_str_eq(err.file, c->name);
	cr_assert(strstr(err.msg, c->fragment),
		  "%s: message '%s' lacks '%s'", c->name, err.msg,
		  c->fragment);
	cr_assert_eq(err.line, c->line, "%s: line %d:%d, expected %d: %s",
		     c->name, err.line, err.col, c->line, err.msg);
	cr_assert_gt(err.col, 0, "%s: no column: %s", c->name, err.msg);
}

/* At least 30 cases, as the loader's contract is mostly its refusals. */
Test(scenario, enough_malformed_cases)
{
	cr_assert_geq(NBAD, 30);
}

static struct scenario *parse_ok(const char *yaml)
{
	struct scn_error err;
	struct scenario *sc = scenario_parse(yaml, strlen(yaml), "ok", &err);

	cr_assert_not_null(sc, "%d:%d: %s", err.line, err.col, err.msg);
	return sc;
}

static int node(const struct scenario *sc, const char *name)
{
	int i = scenario_find(sc, name);

	cr_assert_geq(i, 0, "no node '%s'", name);
	return i;
}

/*
 * Relays pipeline by default, but store where a task of the file sends
 * int8 parameters (one scale for the whole model, known at the end); a
 * file that says pipelined keeps it (run refuses it there, at the line).
 */
Test(scenario, int8_tasks_relay_by_storing_unless_told)
{
	static const char i8[] = NET L_TASKS_HEAD L_TNAME L_TGLOBAL L_TLOCALS
		L_TPARAMS "    bytes_per_parameter: 1\n" L_TWORK;
	struct scenario *sc = parse_ok(i8);

	cr_expect_eq(sc->relay, SCN_RELAY_STORE);
	cr_expect_eq(sc->relay_line, 0);
	scenario_free(sc);
	sc = parse_ok("relay: pipelined\n" BASE);
	cr_expect_eq(sc->relay, SCN_RELAY_PIPELINED);
	cr_expect_eq(sc->relay_line, 1);
	scenario_free(sc);
	{
		char y[2048];

		snprintf(y, sizeof(y), "relay: pipelined\n%s", i8);
		sc = parse_ok(y);
		cr_expect_eq(sc->relay, SCN_RELAY_PIPELINED);
		scenario_free(sc);
	}
	sc = parse_ok("relay: store\n" BASE);
	cr_expect_eq(sc->relay, SCN_RELAY_STORE);
	scenario_free(sc);
}

Test(scenario, base_and_defaults)
{
	struct scenario *sc = parse_ok(BASE);
	const struct scn_task *t;
	int a = node(sc, "A"), r1 = node(sc, "r1"), s1 = node(sc, "s1");

	cr_expect_str_eq(sc->name, "base");
	cr_expect_str_eq(sc->file, "ok");
	cr_expect_eq(sc->nnodes, 9);
	cr_expect_eq(sc->nfibres, 2);
	cr_expect_eq(sc->ntasks, 1);
	cr_expect_eq(sc->seed, 1);
	cr_expect_float_eq(sc->scale, 1.0, 1e-12);
	cr_expect_str_eq(sc->addressing, "198.18.0.0/15");
	cr_expect_float_eq(sc->wavelength_gbps, 100, 1e-12);
	cr_expect_float_eq(sc->demand_gbps, 10, 1e-12);
	cr_expect_float_eq(sc->weights.alpha, 1.0, 1e-12);
	cr_expect_float_eq(sc->weights.beta, 2, 1e-12);
	cr_expect_float_eq(sc->weights.reuse, 0.1, 1e-12);
	cr_expect_float_eq(sc->weights.adddrop, 0.05, 1e-12);
	cr_expect_eq(sc->relay, SCN_RELAY_PIPELINED);
	cr_expect_eq(sc->relay_line, 0);
	cr_expect(sc->never_slower);
	cr_expect_float_eq(sc->weights.stretch, 1.1, 1e-12);
	cr_expect_float_eq(sc->chunk_bytes, SCN_CHUNK_KB * 1e3, 1e-9);

	cr_expect_eq(sc->nodes[a].kind, NODE_ROADM);
	cr_expect_eq(sc->nodes[a].router, r1);
	cr_expect_eq(sc->nodes[a].line, 5);
	cr_expect_eq(sc->nodes[r1].kind, NODE_ROUTER);
	cr_expect_eq(sc->nodes[r1].attach, a);
	cr_expect_eq(sc->nodes[s1].kind, NODE_SERVER);
	cr_expect_eq(sc->nodes[s1].attach, r1);
	cr_expect_eq(sc->nodes[s1].line, 14);
	cr_expect_float_eq(sc->nodes[s1].access_km, 0, 1e-12);
	cr_expect_float_eq(sc->nodes[node(sc, "s3")].access_gbps, 40, 1e-12);
	cr_expect_float_eq(sc->nodes[node(sc, "s3")].cpu, 2, 1e-12);
	cr_expect_eq(scenario_find(sc, "nowhere"), -1);

	cr_expect_eq(sc->fibres[0].a, a);
	cr_expect_eq(sc->fibres[0].b, node(sc, "B"));
	cr_expect_float_eq(sc->fibres[0].km, 100, 1e-12);
	cr_expect_eq(sc->fibres[0].wavelengths, 8, "default per fibre");
	cr_expect_eq(sc->fibres[1].wavelengths, 4, "per-fibre override");
	cr_expect_eq(sc->fibres[1].line, 8);

	t = &sc->tasks[0];
	cr_expect_str_eq(t->name, "t1");
	cr_expect_eq(t->line, 18);
	cr_expect_eq(t->global, s1);
	cr_expect_eq(t->nlocals, 2);
	cr_expect_eq(t->locals[0], node(sc, "s2"));
	cr_expect_eq(t->locals[1], node(sc, "s3"));
	cr_expect_eq(t->parameters, 1000);
	cr_expect_eq(t->bytes_per_parameter, 4);
	cr_expect_eq(scn_task_bytes(t), 4000);
	cr_expect_float_eq(t->work_core_s, 0.5, 1e-12);
	cr_expect_eq(t->agg_core_s, 0, "aggregating is instant by default");
	cr_expect_eq(t->rounds, 1, "rounds default 1");
	cr_expect_float_eq(t->demand_gbps, 10, 1e-12, "scenario default");
	scenario_free(sc);
}

Test(scenario, explicit_values)
{
	struct scenario *sc = parse_ok(
		L_NAME "wavelength_gbps: 100\nwavelengths: 8\ndemand_gbps: 10\n"
		"seed: 42\nscale: 1000\naddressing: 10.64.0.0/10\n"
		"description: \"a: b\"\nsource: made up\n"
		"weights: {beta: 2, adddrop: 0}\n"
		"roadms: [A, B, C, N_1-x-12345]\n"
		"fibres: [{a: A, b: B, km: 0.5, wavelengths: 4096,"
		" loss: 0.002}]\n"
		L_ROUTERS
		"servers:\n"
		"  - {name: s1, router: r1, access_gbps: 100, access_km: 2,\n"
		"     cpu: 0.5, memory_mib: 64}\n"
		"  - {name: s2, router: r2, access_gbps: 25, cpu: 8,\n"
		"     memory_mib: 4096}\n"
		"tasks:\n"
		"  - {name: big.model-1, global: s1, locals: [s2],\n"
		"     parameters: 1000000000000, bytes_per_parameter: 8,\n"
		"     work_core_s: 0, rounds: 1000000, arrival: 7,\n"
		"     demand_gbps: 25, agg_core_s: 0.00025}\n");
	const struct scn_task *t = &sc->tasks[0];

	cr_expect_eq(sc->seed, 42);
	cr_expect_float_eq(sc->scale, 1000, 1e-12);
	cr_expect_str_eq(sc->addressing, "10.64.0.0/10");
	cr_expect_float_eq(sc->weights.alpha, 1.0, 1e-12, "default kept");
	cr_expect_float_eq(sc->weights.beta, 2, 1e-12);
	cr_expect_float_eq(sc->weights.reuse, 0.1, 1e-12, "default kept");
	cr_expect_float_eq(sc->weights.adddrop, 0, 1e-12);
	cr_expect_geq(scenario_find(sc, "N_1-x-12345"), 0, "11 characters");
	cr_expect_eq(sc->fibres[0].wavelengths, 4096);
	cr_expect_float_eq(sc->fibres[0].loss, 0.002, 1e-15);
	cr_expect_float_eq(sc->nodes[node(sc, "s1")].access_km, 2, 1e-12);
	cr_expect_str_eq(t->name, "big.model-1");
	cr_expect_eq(t->parameters, 1000000000000ull);
	cr_expect_eq(scn_task_bytes(t), 8000000000000ull);
	cr_expect_eq(t->rounds, 1000000);
	cr_expect_eq(t->arrival, 7);
	cr_expect_float_eq(t->demand_gbps, 25, 1e-12);
	cr_expect_float_eq(t->agg_core_s, 0.00025, 1e-15);
	scenario_free(sc);
}

/* A task's fields but its name and arrival, in flow style. */
#define T_BODY "global: s1, locals: [s2], parameters: 1, " \
	"bytes_per_parameter: 1, work_core_s: 1"

/* yaml's tasks, in the order the loader gives them: the n names of want. */
static void task_order(const char *yaml, const char *const *want, int n)
{
	struct scenario *sc = parse_ok(yaml);

	cr_assert_eq(sc->ntasks, n);
	for (int i = 0; i < n; i++)
		cr_expect_str_eq(sc->tasks[i].name, want[i], "position %d", i);
	scenario_free(sc);
}

Test(scenario, arrival_order)
{
	static const char *const want[] = { "c", "e", "b", "a", "d" };

	task_order(NET "tasks:\n"
		   "  - {name: a, " T_BODY "}\n"
		   "  - {name: b, arrival: 5, " T_BODY "}\n"
		   "  - {name: c, arrival: 2, " T_BODY "}\n"
		   "  - {name: d, " T_BODY "}\n"
		   "  - {name: e, arrival: 2, " T_BODY "}\n", want, 5);
}

/* Ties are broken by file position, columns included. */
Test(scenario, arrival_ties_on_one_line)
{
	static const char *const want[] = { "q", "p", "r", "s", "t", "u" };

	task_order(NET "tasks: ["
		   "{name: p, arrival: 1, " T_BODY "}, "
		   "{name: q, arrival: 0, " T_BODY "}, "
		   "{name: r, arrival: 1, " T_BODY "}, "
		   "{name: s, arrival: 1, " T_BODY "}, "
		   "{name: t, " T_BODY "}, "
		   "{name: u, " T_BODY "}]\n", want, 6);
}

/* Top-level keys may come in any order: references resolve afterwards. */
Test(scenario, key_order_free)
{
	struct scenario *sc = parse_ok(
		L_TASKS L_SERVERS L_ROUTERS L_FIBRES L_ROADMS L_CAPS L_NAME);

	cr_expect_eq(sc->nnodes, 9);
	cr_expect_eq(sc->ntasks, 1);
	scenario_free(sc);
}

Test(scenario, shipped_files)
{
	glob_t g;
	int rc = glob("scenarios/*.yaml", 0, NULL, &g);

	cr_assert_eq(rc, 0, "no scenarios/*.yaml: run from the top (rc %d)",
		     rc);
	cr_expect_gt(g.gl_pathc, 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct scn_error err;
		struct scenario *sc = scenario_load(g.gl_pathv[i], &err);

		cr_expect_not_null(sc, "%s:%d:%d: %s", err.file, err.line,
				   err.col, err.msg);
		if (!sc)
			continue;
		cr_expect_str_eq(sc->file, g.gl_pathv[i]);
		cr_expect_gt(sc->ntasks, 0, "%s has no task", g.gl_pathv[i]);
		cr_expect_gt(sc->nnodes, 0);
		scenario_free(sc);
	}
	globfree(&g);
}

/* Two scenarios alike in everything the twin reads. */
static void same_scenario(const struct scenario *a, const struct scenario *b,
			  const char *what)
{
	cr_assert_str_eq(a->name, b->name, "%s", what);
	cr_expect_eq(a->seed, b->seed, "%s", what);
	cr_expect_eq(a->scale, b->scale, "%s", what);
	cr_expect_str_eq(a->addressing, b->addressing, "%s", what);
	cr_expect_eq(a->wavelength_gbps, b->wavelength_gbps, "%s", what);
	cr_expect_eq(a->demand_gbps, b->demand_gbps, "%s", what);
	cr_expect(!memcmp(&a->weights, &b->weights, sizeof(a->weights)), "%s",
		  what);
	cr_expect_eq(a->relay, b->relay, "%s", what);
	cr_expect_eq(a->chunk_bytes, b->chunk_bytes, "%s", what);
	cr_expect_eq(a->never_slower, b->never_slower, "%s", what);
	cr_assert_eq(a->nnodes, b->nnodes, "%s", what);
	for (int i = 0; i < a->nnodes; i++) {
		const struct scn_node *x = &a->nodes[i];
		int j = scenario_find(b, x->name);

		cr_assert_geq(j, 0, "%s: node %s lost", what, x->name);
		cr_expect_eq(x->kind, b->nodes[j].kind, "%s: %s", what,
			     x->name);
		cr_expect_str_eq(x->attach < 0 ? "" : a->nodes[x->attach].name,
				 b->nodes[j].attach < 0 ?
					 "" :
					 b->nodes[b->nodes[j].attach].name,
				 "%s: %s", what, x->name);
		cr_expect_eq(x->access_gbps, b->nodes[j].access_gbps);
		cr_expect_eq(x->access_km, b->nodes[j].access_km);
		cr_expect_eq(x->cpu, b->nodes[j].cpu);
		cr_expect_eq(x->memory_mib, b->nodes[j].memory_mib);
		cr_expect_eq(x->placed, b->nodes[j].placed, "%s: %s", what,
			     x->name);
		cr_expect_eq(x->x, b->nodes[j].x, "%s: %s", what, x->name);
		cr_expect_eq(x->y, b->nodes[j].y, "%s: %s", what, x->name);
	}
	cr_assert_eq(a->nfibres, b->nfibres, "%s", what);
	for (int i = 0; i < a->nfibres; i++) {
		cr_expect_str_eq(a->nodes[a->fibres[i].a].name,
				 b->nodes[b->fibres[i].a].name, "%s", what);
		cr_expect_str_eq(a->nodes[a->fibres[i].b].name,
				 b->nodes[b->fibres[i].b].name, "%s", what);
		cr_expect_eq(a->fibres[i].km, b->fibres[i].km, "%s", what);
		cr_expect_eq(a->fibres[i].wavelengths, b->fibres[i].wavelengths,
			     "%s", what);
		cr_expect_eq(a->fibres[i].loss, b->fibres[i].loss, "%s", what);
	}
	cr_assert_eq(a->ntasks, b->ntasks, "%s", what);
	for (int i = 0; i < a->ntasks; i++) {
		const struct scn_task *x = &a->tasks[i], *y = &b->tasks[i];

		cr_expect_str_eq(x->name, y->name, "%s: task order", what);
		cr_expect_str_eq(a->nodes[x->global].name,
				 b->nodes[y->global].name, "%s", what);
		cr_assert_eq(x->nlocals, y->nlocals, "%s", what);
		for (int k = 0; k < x->nlocals; k++)
			cr_expect_str_eq(a->nodes[x->locals[k]].name,
					 b->nodes[y->locals[k]].name, "%s",
					 what);
		cr_expect_eq(x->parameters, y->parameters, "%s", what);
		cr_expect_eq(x->bytes_per_parameter, y->bytes_per_parameter);
		cr_expect_eq(x->work_core_s, y->work_core_s, "%s", what);
		cr_expect_eq(x->agg_core_s, y->agg_core_s, "%s", what);
		cr_expect_eq(x->rounds, y->rounds, "%s", what);
		cr_expect_eq(x->demand_gbps, y->demand_gbps, "%s", what);
		cr_expect_eq(x->arrival, y->arrival, "%s: %s", what, x->name);
	}
}

/*
 * scenario_write: every shipped scenario, written and loaded again, is
 * the same scenario, number for number (what an experiment's points are
 * made with).
 */
Test(scenario, written_scenarios_load_back_the_same)
{
	glob_t g;

	cr_assert_eq(glob("scenarios/*.yaml", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct scn_error err;
		struct scenario *a = scenario_load(g.gl_pathv[i], &err), *b;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		cr_assert_not_null(a, "%s: %s", g.gl_pathv[i], err.msg);
		cr_assert_not_null(f);
		cr_assert_eq(scenario_write(a, f), 0);
		cr_assert_eq(fclose(f), 0);
		b = scenario_parse(text, len, "written", &err);
		cr_assert_not_null(b, "%s written: %d:%d: %s\n%s",
				   g.gl_pathv[i], err.line, err.col, err.msg,
				   text);
		same_scenario(a, b, g.gl_pathv[i]);
		scenario_free(a);
		scenario_free(b);
		free(text);
	}
	globfree(&g);
}

/* A fibre's loss is written when it has one, and read back the same. */
/* a written by scenario_write and parsed back (its text in *text). */
static struct scenario *written_back(const struct scenario *a, char **text)
{
	struct scn_error err;
	struct scenario *b;
	size_t len = 0;
	FILE *f = open_memstream(text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(scenario_write(a, f), 0);
	cr_assert_eq(fclose(f), 0);
	b = scenario_parse(*text, len, "written", &err);
	cr_assert_not_null(b, "%d:%d: %s\n%s", err.line, err.col, err.msg,
			   *text);
	return b;
}

/* A task's aggregating time is written, and read back the same. */
Test(scenario, written_aggregation_loads_back_the_same)
{
	struct scenario *a = parse_ok(BASE "    agg_core_s: 0.000125\n"), *b;
	char *text = NULL;

	cr_expect_float_eq(a->tasks[0].agg_core_s, 0.000125, 1e-15);
	b = written_back(a, &text);
	cr_expect(strstr(text, "agg_core_s: 0.000125"), "%s", text);
	same_scenario(a, b, "aggregation");
	scenario_free(a);
	scenario_free(b);
	free(text);
}

/* Pipelined relays and their chunk are written, and read back the same. */
Test(scenario, written_relay_loads_back_the_same)
{
	struct scenario *a = parse_ok(BASE "relay: pipelined\nchunk_kb: 12.5\n"
				      "never_slower: false\n"
				      "weights: {stretch: 1.25}\n"),
			*b;
	char *text = NULL;

	cr_expect_eq(a->relay, SCN_RELAY_PIPELINED);
	cr_expect_eq(a->relay_line, 24);
	cr_expect_float_eq(a->chunk_bytes, 12500, 1e-9);
	b = written_back(a, &text);
	cr_expect(strstr(text, "relay: pipelined"), "%s", text);
	cr_expect(!a->never_slower && !b->never_slower);
	cr_expect_float_eq(b->weights.stretch, 1.25, 1e-12);
	same_scenario(a, b, "relay");
	scenario_free(a);
	scenario_free(b);
	free(text);
}

Test(scenario, written_loss_loads_back_the_same)
{
	struct scenario *a = parse_ok(
		HEAD "fibres:\n  - {a: A, b: B, km: 100, loss: 0.0123}\n"
		"  - {a: B, b: C, km: 50}\n" L_ROUTERS L_SERVERS L_TASKS), *b;
	char *text = NULL;

	b = written_back(a, &text);
	cr_expect(strstr(text, "loss: 0.0123"), "%s", text);
	same_scenario(a, b, "loss");
	cr_expect_eq(b->fibres[1].loss, 0);
	scenario_free(a);
	scenario_free(b);
	free(text);
}

Test(scenario, written_split_loads_back_the_same)
{
	struct scenario *a = parse_ok(BASE "    split_over: 7\n"
				      "    shares: [6, 2]\n"), *b;
	char *text = NULL;

	cr_assert_eq(a->tasks[0].split_over, 7);
	cr_assert_eq(scenario_task_split(&a->tasks[0]), 7);
	cr_assert_eq(scenario_task_share(&a->tasks[0], 0), 6);
	cr_assert_eq(scenario_task_share(&a->tasks[0], 1), 2);
	b = written_back(a, &text);
	same_scenario(a, b, "split");
	cr_expect_eq(b->tasks[0].split_over, 7);
	cr_expect_eq(b->tasks[0].share[0], 6);
	cr_expect_eq(b->tasks[0].share[1], 2);
	scenario_free(a);
	scenario_free(b);
	free(text);
	/* without them: as many shares as locals, in order */
	a = parse_ok(BASE);
	cr_expect_eq(scenario_task_split(&a->tasks[0]), 2);
	cr_expect_eq(scenario_task_share(&a->tasks[0], 1), 1);
	scenario_free(a);
}

Test(scenario, load_missing_file)
{
	struct scn_error err;
	struct scenario *sc;

	errno = 0;
	sc = scenario_load("scenarios/does-not-exist.yaml", &err);
	cr_assert_null(sc);
	cr_expect_eq(errno, ENOENT);
	cr_expect_str_eq(err.file, "scenarios/does-not-exist.yaml");
	cr_expect_eq(err.line, 0);
	cr_expect(strstr(err.msg, "cannot open"), "message: '%s'", err.msg);
	cr_expect(strstr(err.msg, strerror(ENOENT)), "message: '%s'",
		  err.msg);
}

/* A device that never ends, a directory: refused before any read. */
Test(scenario, load_only_regular_files, .timeout = 10)
{
	static const char *const paths[] = { "/dev/zero", "/dev/urandom",
					     "scenarios" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct scn_error err;
		struct scenario *sc = scenario_load(paths[i], &err);

		cr_assert_null(sc, "%s", paths[i]);
		cr_expect(strstr(err.msg, "not a regular file"), "%s: '%s'",
			  paths[i], err.msg);
	}
}

Test(scenario, load_refuses_large_files, .timeout = 10)
{
	char path[] = "/tmp/tl-big-XXXXXX";
	int fd = mkstemp(path);
	struct scn_error err;
	struct scenario *sc;

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, SCN_FILE_MAX + 1), 0);
	close(fd);
	errno = 0;
	sc = scenario_load(path, &err);
	unlink(path);
	cr_assert_null(sc);
	cr_expect_eq(errno, EFBIG);
	cr_expect(strstr(err.msg, "larger than 4 MiB"), "'%s'", err.msg);
}

/* 100,000 levels of nesting: refused where the limit is crossed, fast. */
Test(scenario, parse_refuses_deep_nesting, .timeout = 10)
{
	size_t n = 100000, len = 3 + 2 * n;
	char *y = malloc(len + 1);
	struct scn_error err;
	struct scenario *sc;

	cr_assert_not_null(y);
	memcpy(y, "a: ", 3);
	memset(y + 3, '[', n);
	memset(y + 3 + n, ']', n);
	y[len] = '\0';
	sc = scenario_parse(y, len, "deep", &err);
	free(y);
	cr_assert_null(sc);
	cr_expect_eq(err.line, 1);
	/* the map is level 1, so the 32nd '[' is the 33rd level */
	cr_expect_eq(err.col, 4 + SCN_DEPTH_MAX - 1, "col %d", err.col);
	cr_expect(strstr(err.msg, "nested deeper than 32 levels"), "'%s'",
		  err.msg);
}

Test(scenario, free_null)
{
	scenario_free(NULL);
}
