/* SPDX-License-Identifier: MIT */
/*
 * shim.h - private interface between the preload shim's interposers
 * (interpose.c) and its per-descriptor accounting (shim.c).
 *
 * Every interposer calls the real libc function first, keeps its result
 * and errno, and only then (on success) tells shim.c what was written;
 * errno is restored before it returns.  The one exception is a call
 * that closes a descriptor (close, dup2 onto it, fclose, close_range):
 * its pending hint can only be issued while the descriptor is still
 * open, so shim_release runs just before the real call (it changes no
 * state the program can see: lseek SEEK_CUR, fstat and
 * sync_file_range(SYNC_FILE_RANGE_WRITE) leave the offset and any
 * pending writeback error alone).
 *
 * Private to the shim and its tests.
 */
#ifndef FK_SHIM_H
#define FK_SHIM_H

#include <stdint.h>
#include <sys/types.h>

/* "The offset is the file position": write(), writev(), stdio, ... */
#define SHIM_POS UINT64_MAX
/* "At end of file": pwrite on an O_APPEND descriptor, RWF_APPEND. */
#define SHIM_APPEND (UINT64_MAX - 1)

/*
 * shim_enter - 1 if the caller may do the shim's accounting now: the
 * shim is enabled and this thread is not already inside it (a signal
 * handler that interrupted the shim, or a call the shim itself makes).
 * Then the caller must call shim_leave when done.  0 otherwise.
 * Async-signal-safe.
 */
int shim_enter(void);
void shim_leave(void);

/* @bytes were written to @fd at @off (or SHIM_POS / SHIM_APPEND). */
void shim_written(int fd, uint64_t off, uint64_t bytes);
/* @bytes were handed to a stdio stream on @fd (written at its file
 * position, maybe later: the stream's buffer). */
void shim_stdio_written(int fd, uint64_t bytes);
/* @fd is about to be closed or replaced: issue its pending hint, drop
 * its ranges.  @closing: 1 for close/dup2/fclose, 0 when only its flags
 * change (fcntl F_SETFL). */
void shim_release(int fd, int closing);
/* @fd is new (open, dup, fopen...): forget whatever a closed descriptor
 * of that number left. */
void shim_new_fd(int fd);
/* @fd was fsynced or fdatasynced successfully: its data is clean. */
void shim_synced(int fd);
/* @fd was truncated to @length bytes. */
void shim_truncated(int fd, uint64_t length);
/* Counters, for the in-process tests. */
void shim_counters(uint64_t *hints, uint64_t *waits, uint64_t *bytes);
/* Every slot of [first, last] (close_range, closefrom). */
void shim_release_range(unsigned first, unsigned last);

#endif
