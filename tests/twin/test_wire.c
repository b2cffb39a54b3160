// SPDX-License-Identifier: MIT
/*
 * What a transfer puts on the wire (twin/wire.h), against figures worked
 * out by hand: the model the workers train, its encoding, the 40-byte
 * header, TCP segments of 1448 bytes with 66 bytes of headers each, and
 * one 66-byte ACK per segment.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "twin/scenario.h"
#include "twin/wire.h"

static struct scenario *one_task(const char *scale, const char *params,
				 const char *bpp)
{
	char y[1024];
	struct scn_error err;
	struct scenario *sc;

	snprintf(y, sizeof(y),
		 "name: w\nscale: %s\nwavelength_gbps: 100\nwavelengths: 4\n"
		 "demand_gbps: 1\nroadms: [A, B]\nfibres: [{a: A, b: B, km: 1}]\n"
		 "routers: [{name: rA, roadm: A}, {name: rB, roadm: B}]\n"
		 "servers:\n"
		 "  - {name: g, router: rA, access_gbps: 10, cpu: 1, "
		 "memory_mib: 1}\n"
		 "  - {name: l, router: rB, access_gbps: 10, cpu: 1, "
		 "memory_mib: 1}\n"
		 "tasks:\n  - {name: t, global: g, locals: [l], parameters: %s,"
		 " bytes_per_parameter: %s, work_core_s: 0.001}\n",
		 scale, params, bpp);
	sc = scenario_parse(y, strlen(y), "w", &err);
	cr_assert_not_null(sc, "%d: %s", err.line, err.msg);
	return sc;
}

/* 1,000,000 / 40 = 25,000 parameters = 10 x (2499 + 1): 100,000 bytes */
Test(wire, float32_message)
{
	struct scenario *sc = one_task("40", "1000000", "4");
	struct wire_msg m;

	cr_assert_eq(wire_message(sc, &sc->tasks[0], &m), 0);
	cr_expect_eq(m.dim, 2499);
	cr_expect_eq(m.nparams, 25000);
	cr_expect_eq(m.payload, 100000);
	cr_expect_eq(m.msg, 100040);
	/* ceil(100,040 / 1448) = 70 (69 x 1448 = 99,912) */
	cr_expect_eq(m.segments, 70);
	cr_expect_eq(m.data_bytes, 100040 + 70 * 66);
	cr_expect_eq(m.acks, 70);
	cr_expect_eq(m.ack_bytes, 70 * 66);
	scenario_free(sc);
}

/* int8 carries a 4-byte scale: 6,250 params -> 6,254 bytes, 5 segments */
Test(wire, int8_message)
{
	struct scenario *sc = one_task("160", "1000000", "1");
	struct wire_msg m;

	cr_assert_eq(wire_message(sc, &sc->tasks[0], &m), 0);
	cr_expect_eq(m.nparams, 6250);
	cr_expect_eq(m.payload, 6254);
	cr_expect_eq(m.msg, 6294);
	cr_expect_eq(m.segments, 5);	/* 4 x 1448 = 5792 < 6294 */
	cr_expect_eq(m.data_bytes, 6294 + 5 * 66);
	scenario_free(sc);
}

/* A message of exactly k segments does not spill into a k + 1st */
Test(wire, exact_segments)
{
	/* 1448 x 10 = 14,480 = 40 + payload 14,440 = 3,610 float32 */
	struct scenario *sc = one_task("1", "3610", "4");
	struct wire_msg m;

	cr_assert_eq(wire_message(sc, &sc->tasks[0], &m), 0);
	cr_expect_eq(m.nparams, 3610);
	cr_expect_eq(m.msg, 14480);
	cr_expect_eq(m.segments, 10);
	scenario_free(sc);
}
