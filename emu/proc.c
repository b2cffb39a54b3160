// SPDX-License-Identifier: MIT
/* Process identity from /proc; see proc.h. */
#include "proc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long long proc_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* comm may hold spaces */
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;	/* gone, or a zombie: as good as gone */
	/* after ") " come fields 3.. ; starttime is field 22 */
	for (int field = 3; p && field <= 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

bool proc_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	size_t d = strlen(" (deleted)");

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, len - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if ((size_t)n > d && !strcmp(buf + n - d, " (deleted)"))
		buf[n - d] = '\0';
	return !strchr(buf, '\n');
}

bool proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

pid_t proc_child(pid_t pid)
{
	char path[64], buf[64];
	long child = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
		 (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		child = strtol(buf, NULL, 10);
	fclose(f);
	return child > 1 ? (pid_t)child : 0;
}

void proc_close_but(const int *keep, int n)
{
	unsigned int from = 3;

	/* the gaps between the kept, lowest first (n is a handful) */
	for (;;) {
		unsigned int next = ~0u;

		for (int i = 0; i < n; i++) {
			unsigned int k = (unsigned int)keep[i];

			if (keep[i] >= 0 && k >= from && k < next)
				next = k;
		}
		if (next == ~0u)
			break;
		if (next > from)
			close_range(from, next - 1, 0);
		from = next + 1;
	}
	close_range(from, ~0u, 0);
}
