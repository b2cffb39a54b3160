// SPDX-License-Identifier: MIT
#include "labstate.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "twin/scenario.h"

bool lab_prefix_ok(const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 0 || n > LAB_PREFIX_MAX || prefix[0] < 'a' || prefix[0] > 'z')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((prefix[i] >= 'a' && prefix[i] <= 'z') ||
		      (prefix[i] >= '0' && prefix[i] <= '9')))
			return false;
	return true;
}

void lab_delay_name(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, "%.9s-delay", prefix);
}

void lab_traffic_name(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, "%.9s-traf", prefix);
}

/* "<prefix>-<node>", node a scenario's node name (no '/', no '..'), or a
 * split's "<prefix>--h<k>" and "<prefix>--u". */
static bool ns_of_prefix(const char *prefix, const char *ns)
{
	size_t n = strlen(prefix);

	const char *rest = ns + n + 1;

	if (strncmp(ns, prefix, n) || ns[n] != '-')
		return false;
	/* a split's hosts and their switch: "-h<k>", "-u" */
	if (!strcmp(rest, "-u"))
		return true;
	if (!strncmp(rest, "-h", 2) && rest[2] >= '1' && rest[2] <= '9' &&
	    strspn(rest + 2, "0123456789") == strlen(rest + 2) &&
	    strlen(rest + 2) <= 3)
		return true;
	return scn_name_ok(rest, SCN_NODE_NAME_MAX, false);
}

static bool add_netns(struct lab_state *st, const char *name)
{
	char (*m)[64] = realloc(st->netns, ((size_t)st->nnetns + 1) *
						   sizeof(*m));

	if (!m)
		return false;
	st->netns = m;
	snprintf(st->netns[st->nnetns++], sizeof(st->netns[0]), "%s", name);
	return true;
}

static bool add_pid(struct lab_state *st, const struct lab_state_pid *p)
{
	struct lab_state_pid *m = realloc(st->pids, ((size_t)st->npids + 1) *
						    sizeof(*m));

	if (!m)
		return false;
	st->pids = m;
	st->pids[st->npids++] = *p;
	return true;
}

/* One line (no newline, NUL-free): kept (true) or rejected (false). */
static bool take(struct lab_state *st, const char *prefix, const char *line,
		 int *err)
{
	if (!strncmp(line, "netns ", 6)) {
		if (!ns_of_prefix(prefix, line + 6))
			return false;
		if (!add_netns(st, line + 6))
			*err = -ENOMEM;
		return true;
	}
	if (!strncmp(line, "pid ", 4)) {
		struct lab_state_pid p = { 0 };
		char name[16], want[16], traf[16];
		unsigned long long pid;
		int off = 0;

		if (sscanf(line, "pid %llu %llu %15s %n", &pid, &p.start, name,
			   &off) != 3 || !off || pid <= 1 || pid > 4194304 ||
		    !p.start)
			return false;
		lab_delay_name(prefix, want, sizeof(want));
		lab_traffic_name(prefix, traf, sizeof(traf));
		if ((strcmp(name, want) && strcmp(name, traf)) ||
		    line[off] != '/' ||
		    strlen(line + off) >= sizeof(p.exe))
			return false;
		p.pid = (pid_t)pid;
		memcpy(p.name, name, sizeof(p.name));
		memcpy(p.exe, line + off, strlen(line + off) + 1);
		if (!add_pid(st, &p))
			*err = -ENOMEM;
		return true;
	}
	if (!strncmp(line, "scenario ", 9)) {
		if (strlen(line + 9) >= sizeof(st->scenario))
			return false;
		memcpy(st->scenario, line + 9, strlen(line + 9) + 1);
		return true;
	}
	if (!strncmp(line, "scheduler ", 10)) {
		if (!scn_name_ok(line + 10, sizeof(st->scheduler) - 1, false))
			return false;
		memcpy(st->scheduler, line + 10, strlen(line + 10) + 1);
		return true;
	}
	if (!strncmp(line, "part ", 5)) {
		if (!scn_name_ok(line + 5, sizeof(st->part) - 1, false))
			return false;
		memcpy(st->part, line + 5, strlen(line + 5) + 1);
		return true;
	}
	if (!strncmp(line, "digest ", 7)) {
		unsigned long long d;
		int off = 0;

		if (sscanf(line + 7, "%16llx%n", &d, &off) != 1 ||
		    off != 16 || line[7 + off] || !d)
			return false;
		st->digest = d;
		return true;
	}
	if (!strncmp(line, "dilation ", 9)) {
		char *end;
		double n = strtod(line + 9, &end);

		if (end == line + 9 || *end || !(n >= 1 &&
						 n <= LAB_DILATION_MAX))
			return false;
		st->dilation = n;
		return true;
	}
	return false;
}

int lab_state_parse(const char *text, size_t len, const char *prefix,
		    struct lab_state *st)
{
	static const char header[] = "twinlab-state 1\n";
	char *line = malloc(LAB_STATE_LINE_MAX + 1);
	size_t at;
	int err = 0;

	memset(st, 0, sizeof(*st));
	if (!line)
		return -ENOMEM;
	if (len < sizeof(header) - 1 ||
	    memcmp(text, header, sizeof(header) - 1)) {
		free(line);
		return -EINVAL;
	}
	at = sizeof(header) - 1;
	while (at < len && !err) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;

		if (n > LAB_STATE_LINE_MAX || memchr(text + at, '\0', n)) {
			st->rejected++;
		} else {
			memcpy(line, text + at, n);
			line[n] = '\0';
			if (!take(st, prefix, line, &err))
				st->rejected++;
		}
		at += n + 1;
	}
	free(line);
	if (err)
		lab_state_release(st);
	return err;
}

int lab_state_read(const char *prefix, struct lab_state *st)
{
	char path[256], *buf;
	struct stat sb;
	ssize_t n;
	size_t got = 0;
	int fd, err;

	memset(st, 0, sizeof(*st));
	if (!lab_prefix_ok(prefix))
		return -EINVAL;
	snprintf(path, sizeof(path), LAB_STATE_DIR "/%s/state", prefix);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc(LAB_STATE_FILE_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < LAB_STATE_FILE_MAX &&
	       (n = read(fd, buf + got, LAB_STATE_FILE_MAX - got)) > 0)
		got += (size_t)n;
	close(fd);
	err = lab_state_parse(buf, got, prefix, st);
	free(buf);
	return err;
}

void lab_state_release(struct lab_state *st)
{
	free(st->netns);
	free(st->pids);
	memset(st, 0, sizeof(*st));
}
