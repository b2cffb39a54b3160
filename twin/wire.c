// SPDX-License-Identifier: MIT
#include "wire.h"

#include <errno.h>
#include <math.h>

#include "fl.h"

_Static_assert(WIRE_CLASSES == FL_CLASSES, "one data set");

int wire_message(const struct scenario *sc, const struct scn_task *t,
		 struct wire_msg *out)
{
	double scaled = (double)t->parameters / sc->scale;
	uint64_t params = scaled < 1 ? 1 : (uint64_t)scaled;
	int err;

	if (!fl_wire_supported(t->bytes_per_parameter))
		return -EINVAL;
	if (scaled > 1e12)
		return -EOVERFLOW;
	err = fl_shape_for(params, FL_CLASSES, &out->dim);
	if (err)
		return err;
	out->nparams = fl_nparams(FL_CLASSES, out->dim);
	out->payload = fl_wire_size(out->nparams, t->bytes_per_parameter);
	if (!out->payload)
		return -EOVERFLOW;
	out->msg = out->payload + WIRE_MSG_HDR;
	out->segments = (out->msg + WIRE_MSS - 1) / WIRE_MSS;
	out->data_bytes = out->msg + WIRE_SEG_OVERHEAD * out->segments;
	out->acks = out->segments;
	out->ack_bytes = WIRE_SEG_OVERHEAD * out->acks;
	return 0;
}

double wire_tcp_resume(double lost_s, double rtt_s, double back_s)
{
	double rto = WIRE_RTO_MIN_S + rtt_s, t = lost_s + rto;

	if (!isfinite(back_s))
		return INFINITY;
	while (t < back_s) {
		rto *= 2;
		t += rto;
	}
	return t;
}

double wire_slow_start_s(double segments, double rtt_s)
{
	return segments > 0 ? ceil(log2(segments + 1)) * rtt_s : 0;
}

double wire_tcp_stall(double lost_s, double rtt_s, double back_s,
		      double segments)
{
	return wire_tcp_resume(lost_s, rtt_s, back_s) +
	       fmax(0, wire_slow_start_s(segments, rtt_s) - rtt_s);
}
