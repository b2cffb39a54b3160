/* SPDX-License-Identifier: MIT */
/*
 * Process identity from /proc: a PID names a process only together with
 * its start time; name and executable confirm it is the one we started.
 */
#ifndef EMU_PROC_H
#define EMU_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * proc_start - when process pid started (field 22 of /proc/PID/stat,
 * clock ticks since boot): with the pid, it names one process for good.
 * 0 if there is no such process or it is a zombie.
 */
unsigned long long proc_start(pid_t pid);

/* The executable of a process, without the " (deleted)" the kernel adds
 * once the file is replaced (a rebuilt twinlab still owns what it ran). */
bool proc_exe(pid_t pid, char *buf, size_t len);

/* The name a process gave itself (/proc/PID/comm). */
bool proc_comm(pid_t pid, char *buf, size_t len);

/* The first child of pid's main thread, 0 if none. */
pid_t proc_child(pid_t pid);

/*
 * proc_close_but - close every descriptor of the calling process from 3
 * up but the n in keep (negative ones are none): a forked child keeps
 * what it was given, not all its parent had open.
 */
void proc_close_but(const int *keep, int n);

#endif
