// SPDX-License-Identifier: MIT
#include "tools/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tools/twinlab.h"

int json_add(struct json_object *o, const char *k, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, k, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int json_push(struct json_object *a, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_array_add(a, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int json_add_null(struct json_object *o, const char *k)
{
	return json_object_object_add(o, k, NULL) ? -ENOMEM : 0;
}

int json_add_num(struct json_object *o, const char *k, double v)
{
	return isfinite(v) ? json_add(o, k, json_object_new_double(v))
			   : json_add_null(o, k);
}

int json_add_str(struct json_object *o, const char *k, const char *s)
{
	return s && s[0] ? json_add(o, k, json_object_new_string(s))
			 : json_add_null(o, k);
}

int json_print(struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!s) {
		p_err("out of memory");
		return -ENOMEM;
	}
	if (puts(s) == EOF || fflush(stdout)) {
		p_err("cannot write the JSON to standard output: %s",
		      strerror(errno));
		return -EIO;
	}
	return 0;
}
