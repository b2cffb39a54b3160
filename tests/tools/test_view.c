// SPDX-License-Identifier: MIT
/*
 * The live view's routing (tools/view/route.h), alone: the token on every
 * request, GET and HEAD but for the two changes (POST), a fixed list of
 * names and nothing else, so that no path outside the page's own files
 * can be asked for.
 */
#include <criterion/criterion.h>

#include <ctype.h>
#include <string.h>

#include "tools/view/route.h"

static const char tok[] = "0123456789abcdef0123456789abcdef";

Test(view, every_request_needs_the_token)
{
	static const char *const bad[] = {
		NULL,
		"",
		"0123456789abcdef0123456789abcde",
		"0123456789abcdef0123456789abcdef0",
		"1123456789abcdef0123456789abcdef",
		"0123456789abcdef0123456789abcdeF",
	};
	static const char *const urls[] = {"/", "/topology", "/events",
					   "/view.js", "/nowhere"};

	for (size_t u = 0; u < sizeof(urls) / sizeof(urls[0]); u++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct view_route r =
				view_route("GET", urls[u], bad[i], tok);

			cr_expect_eq(r.what, VIEW_REFUSED, "%s with %s",
				     urls[u], bad[i] ? bad[i] : "none");
			cr_expect_eq(r.status, 403, "%s with %s", urls[u],
				     bad[i] ? bad[i] : "none");
		}
}

Test(view, only_get_and_head)
{
	static const char *const m[] = {"POST", "PUT",	 "DELETE", "OPTIONS",
					"get",	"PATCH", ""};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		cr_expect_eq(view_route(m[i], "/", tok, tok).status, 405, "%s",
			     m[i]);
	cr_expect_eq(view_route("HEAD", "/", tok, tok).status, 200);
	cr_expect_eq(view_route(NULL, "/", tok, tok).status, 400);
	cr_expect_eq(view_route("GET", NULL, tok, tok).status, 400);
}

Test(view, a_fixed_list_of_names_and_nothing_else)
{
	static const char *const none[] = {
		"/../../etc/passwd",
		"/index.html",
		"//view.js",
		"/view.js/",
		"/./view.js",
		"/VIEW.JS",
		"/page/view.js",
		"/topology/",
		"/events?x",
		"",
		"/%2e%2e/etc/passwd",
		"/node_modules/cytoscape/dist/cytoscape.min.js",
	};
	struct view_route r;

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		r = view_route("GET", none[i], tok, tok);
		cr_expect_eq(r.what, VIEW_REFUSED, "%s", none[i]);
		cr_expect_eq(r.status, 404, "%s", none[i]);
	}
	r = view_route("GET", "/topology", tok, tok);
	cr_expect_eq(r.what, VIEW_TOPOLOGY);
	r = view_route("GET", "/events", tok, tok);
	cr_expect_eq(r.what, VIEW_STREAM);
	for (const struct view_asset *a = view_assets; a->url; a++) {
		r = view_route("GET", a->url, tok, tok);
		cr_expect_eq(r.what, VIEW_ASSET, "%s", a->url);
		cr_expect_eq(r.asset, a, "%s", a->url);
		cr_expect_eq(r.status, 200);
		cr_expect(!strchr(a->file, '/') && a->file[0] != '.',
			  "%s: a bare name", a->file);
	}
}

/* A change is a POST to /cut, /repair or /traffic, and nothing else is. */
Test(view, changes_are_posts_with_the_token)
{
	cr_expect_eq(view_route("POST", "/cut", tok, tok).what, VIEW_CUT);
	cr_expect_eq(view_route("POST", "/repair", tok, tok).what, VIEW_REPAIR);
	cr_expect_eq(view_route("POST", "/traffic", tok, tok).what,
		     VIEW_TRAFFIC);
	cr_expect_eq(view_route("GET", "/traffic", tok, tok).status, 405);
	cr_expect_eq(view_route("POST", "/traffic", NULL, tok).status, 403);
	cr_expect_eq(view_route("POST", "/cut", NULL, tok).status, 403);
	cr_expect_eq(view_route("POST", "/cut", "x", tok).status, 403);
	cr_expect_eq(view_route("GET", "/cut", tok, tok).status, 405);
	cr_expect_eq(view_route("HEAD", "/repair", tok, tok).status, 405);
	cr_expect_eq(view_route("PUT", "/cut", tok, tok).status, 405);
	cr_expect_eq(view_route("POST", "/topology", tok, tok).status, 405);
	cr_expect_eq(view_route("POST", "/cut/", tok, tok).status, 405);
}

Test(view, tokens_are_random_hex)
{
	char a[VIEW_TOKEN_LEN + 1], b[VIEW_TOKEN_LEN + 1];

	cr_assert_eq(view_token(a), 0);
	cr_assert_eq(view_token(b), 0);
	cr_expect_eq(strlen(a), VIEW_TOKEN_LEN);
	for (int i = 0; i < VIEW_TOKEN_LEN; i++)
		cr_expect(isxdigit((unsigned char)a[i]) &&
				  !isupper((unsigned char)a[i]),
			  "%s", a);
	cr_expect_str_neq(a, b, "two draws of 128 bits");
	cr_expect_eq(view_route("GET", "/", a, a).status, 200);
}
