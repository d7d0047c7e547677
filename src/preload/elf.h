/* SPDX-License-Identifier: MIT */
/*
 * elf.h - what a program's ELF file says of the preload (elf.c): built
 * into the preload and into `tfd exec`.
 */
#ifndef TFD_PRELOAD_ELF_H
#define TFD_PRELOAD_ELF_H

#include <stddef.h>

/* 1 if the program execvp(3) would run for prog is statically linked
 * (nothing can be preloaded into it), its file into path; 2 if it is a
 * script whose interpreter is, the interpreter into path; 0 if it is
 * dynamically linked, not found, or not known.  With search 0, prog is
 * the file itself (execve(2)), not looked for in PATH. */
int tfd_program_static(const char *prog, int search, char *path, size_t n);

/* 1 if that program needs a sanitizer's run-time that must be loaded
 * first (AddressSanitizer's), its name as the program names it
 * (libasan.so.8) into name; else 0. */
int tfd_program_runtime(const char *prog, char *name, size_t n);

#endif
