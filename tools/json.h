/* SPDX-License-Identifier: MIT */
/*
 * One way to build and print the JSON the commands print (json-c): every
 * add checked, a value that is absent said as null on purpose, never
 * because an allocation failed.
 */
#ifndef TOOLS_JSON_H
#define TOOLS_JSON_H

#include <json-c/json.h>

/*
 * json_add, json_push - add v to object o under k, or to array a, taking
 * v (NULL: the allocation that made it failed) and putting it back on
 * failure: 0 or -ENOMEM.
 */
int json_add(struct json_object *o, const char *k, struct json_object *v);
int json_push(struct json_object *a, struct json_object *v);

/* json_add_null - k: null in o. 0 or -ENOMEM. */
int json_add_null(struct json_object *o, const char *k);

/* json_add_num - v under k, or null where v is not finite. */
int json_add_num(struct json_object *o, const char *k, double v);

/* json_add_str - s under k, or null where s is NULL or empty. */
int json_add_str(struct json_object *o, const char *k, const char *s);

/* json_print - o on stdout, indented, '/' as is; 0, or -EIO (said). */
int json_print(struct json_object *o);

/* J - go to fail unless x holds (an add or a push that returned 0 is !x). */
#define J(x)                                                                   \
	do {                                                                   \
		if (!(x))                                                      \
			goto fail;                                             \
	} while (0)

#endif
