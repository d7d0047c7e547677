/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdio.h>
#include <tfd.h>

int main(void)
{
    struct itimerspec its = { .it_value = { 0, 500000000 },   /* 0.5 s */
                              .it_interval = { 0, 200000000 } }; /* 0.2 s */
    uint64_t n, total = 0;
    int fd = tfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

    if (fd < 0 || tfd_settime(fd, 0, &its, NULL) < 0)
        return perror("tfd"), 1;
    while (total < 5 && tfd_read(fd, &n, sizeof n) == sizeof n)
        printf("%llu expirations\n", (unsigned long long)(total += n));
    return tfd_close(fd);
}
