// SPDX-License-Identifier: MIT
/* The live view's routing (route.h): pure, so that it is tested alone. */
#include "tools/view/route.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

const struct view_asset view_assets[] = {
	{"/", "index.html", "text/html; charset=utf-8"},
	{"/view.js", "view.js", "text/javascript; charset=utf-8"},
	{"/view.css", "view.css", "text/css; charset=utf-8"},
	{"/cytoscape.min.js", "cytoscape.min.js",
	 "text/javascript; charset=utf-8"},
	{0},
};

/* Equal tokens, in time that does not depend on where they differ. */
static bool token_ok(const char *given, const char *token)
{
	unsigned char diff = 0;

	if (!given || strlen(given) != VIEW_TOKEN_LEN)
		return false;
	for (size_t i = 0; i < VIEW_TOKEN_LEN; i++)
		diff |= (unsigned char)(given[i] ^ token[i]);
	return diff == 0;
}

struct view_route view_route(const char *method, const char *url,
			     const char *given, const char *token)
{
	struct view_route r = {.what = VIEW_REFUSED, .status = 404};
	bool change;

	if (!method || !url)
		return (struct view_route){VIEW_REFUSED, 400, NULL};
	change = !strcmp(url, "/cut") || !strcmp(url, "/repair") ||
		 !strcmp(url, "/traffic");
	if (change ? strcmp(method, "POST") != 0
		   : strcmp(method, "GET") && strcmp(method, "HEAD"))
		return (struct view_route){VIEW_REFUSED, 405, NULL};
	if (!token_ok(given, token))
		return (struct view_route){VIEW_REFUSED, 403, NULL};
	if (change)
		return (struct view_route){url[1] == 'c'   ? VIEW_CUT
					   : url[1] == 'r' ? VIEW_REPAIR
							   : VIEW_TRAFFIC,
					   200, NULL};
	if (!strcmp(url, "/topology"))
		return (struct view_route){VIEW_TOPOLOGY, 200, NULL};
	if (!strcmp(url, "/events"))
		return (struct view_route){VIEW_STREAM, 200, NULL};
	for (const struct view_asset *a = view_assets; a->url; a++)
		if (!strcmp(url, a->url))
			return (struct view_route){VIEW_ASSET, 200, a};
	return r;
}

int view_token(char token[VIEW_TOKEN_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[VIEW_TOKEN_LEN / 2];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -EIO;
	for (size_t i = 0; i < sizeof(b); i++) {
		token[2 * i] = hex[b[i] >> 4];
		token[2 * i + 1] = hex[b[i] & 15];
	}
	token[VIEW_TOKEN_LEN] = '\0';
	return 0;
}
