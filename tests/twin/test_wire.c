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

/*
 * The message of one_task(scale, params, bpp) against want, field by
 * field; a field want leaves 0 is not pinned by that case.
 */
static void message_is(const char *scale, const char *params, const char *bpp,
		       const struct wire_msg *want)
{
	struct scenario *sc = one_task(scale, params, bpp);
	struct wire_msg m;

	cr_assert_eq(wire_message(sc, &sc->tasks[0], &m), 0);
#define PINNED(f)							\
	if (want->f)							\
		cr_expect_eq(m.f, want->f, #f " %llu, want %llu",	\
			     (unsigned long long)m.f,			\
			     (unsigned long long)want->f);
	PINNED(dim) PINNED(nparams) PINNED(payload) PINNED(msg)
	PINNED(segments) PINNED(data_bytes) PINNED(acks) PINNED(ack_bytes)
#undef PINNED
	scenario_free(sc);
}

/* 1,000,000 / 40 = 25,000 parameters = 10 x (2499 + 1): 100,000 bytes */
Test(wire, float32_message)
{
	message_is("40", "1000000", "4", &(struct wire_msg){
		.dim = 2499, .nparams = 25000, .payload = 100000,
		.msg = 100040,
		/* ceil(100,040 / 1448) = 70 (69 x 1448 = 99,912) */
		.segments = 70, .data_bytes = 100040 + 70 * 66,
		.acks = 70, .ack_bytes = 70 * 66 });
}

/* int8 carries a 4-byte scale: 6,250 params -> 6,254 bytes, 5 segments */
Test(wire, int8_message)
{
	message_is("160", "1000000", "1", &(struct wire_msg){
		.nparams = 6250, .payload = 6254, .msg = 6294,
		.segments = 5,	/* 4 x 1448 = 5792 < 6294 */
		.data_bytes = 6294 + 5 * 66 });
}

/* A message of exactly k segments does not spill into a k + 1st */
Test(wire, exact_segments)
{
	/* 1448 x 10 = 14,480 = 40 + payload 14,440 = 3,610 float32 */
	message_is("1", "3610", "4", &(struct wire_msg){
		.nparams = 3610, .msg = 14480, .segments = 10 });
}
