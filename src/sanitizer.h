/* SPDX-License-Identifier: MIT */
/*
 * sanitizer.h - which sanitizer the library is built with, said once:
 * TFD_ASAN (AddressSanitizer), TFD_TSAN (ThreadSanitizer), TFD_SANITIZED
 * (either), as GCC (__SANITIZE_*__) and clang (__has_feature) tell.
 */
#ifndef TFD_SANITIZER_H
#define TFD_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define TFD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TFD_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define TFD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TFD_TSAN 1
#endif
#endif

#if defined(TFD_ASAN) || defined(TFD_TSAN)
#define TFD_SANITIZED 1
#endif

/* A cancellation point follows, where the thread may end without
 * returning through its frames (a cancellation unwinds them, a jump
 * leaves them): AddressSanitizer is told, as before a longjmp, or it
 * finds the poison of their locals still there when the thread's last
 * functions run (a report at its end). */
#ifdef TFD_ASAN
#include <sanitizer/asan_interface.h>
#define tfd_may_not_return() __asan_handle_no_return()
#else
#define tfd_may_not_return() ((void)0)
#endif

#endif
