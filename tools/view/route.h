/* SPDX-License-Identifier: MIT */
/*
 * What the live view answers to a request, decided before anything is
 * read or sent: the token on every request (the stream's too: in the
 * query, or in the cookie the page gets with its first answer; a change,
 * POST /cut, /repair or /traffic, only in its X-Twinlab-Token header, which no
 * other site's page can send), GET and HEAD for the rest, and a fixed
 * list of names — no path is ever looked up as given, so nothing outside
 * the page's own assets can be served.
 */
#ifndef TOOLS_VIEW_ROUTE_H
#define TOOLS_VIEW_ROUTE_H

#include <stddef.h>

/* The token: 32 hex digits (128 random bits). */
#define VIEW_TOKEN_LEN 32

enum view_what {
	VIEW_ASSET,    /* a file of the page: asset says which */
	VIEW_TOPOLOGY, /* the network, the plan and its trees: JSON */
	VIEW_STREAM,   /* server-sent events: the links' load */
	VIEW_CUT,      /* POST: cut the fibre the query names */
	VIEW_REPAIR,   /* POST: repair it */
	VIEW_TRAFFIC,  /* POST: background traffic the query describes */
	VIEW_REFUSED,  /* status says why */
};

struct view_asset {
	const char *url;  /* as requested */
	const char *file; /* its name under the page's folder */
	const char *type; /* Content-Type */
};

struct view_route {
	enum view_what what;
	int status; /* 200, or the 4xx to answer */
	const struct view_asset *asset;
};

/*
 * view_route - what to answer to method and url (the path, without its
 * query) with token given (NULL when absent) against the view's own: the
 * caller gives a POST's header only.
 */
struct view_route view_route(const char *method, const char *url,
			     const char *given, const char *token);

/* The assets, NULL-url terminated (for finding their files). */
extern const struct view_asset view_assets[];

/* token: VIEW_TOKEN_LEN hex digits and a NUL from getrandom. 0 or -errno. */
int view_token(char token[VIEW_TOKEN_LEN + 1]);

#endif
