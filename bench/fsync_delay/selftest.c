/* selftest.c — bench/run's check of fsync_delay.so: run it with the library preloaded.
 * Does 10 fdatasync, 3 fsync, 2 sync_file_range (1 with WAIT_AFTER), 4 writes on an O_DSYNC
 * descriptor (2 through a dup of it), 2 writes on a plain one, and prints the elapsed
 * microseconds. bench/run compares the counters and the time with what these imply. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: selftest DIR\n");
		return 2;
	}
	char a[4096], b[4096];
	snprintf(a, sizeof a, "%s/plain", argv[1]);
	snprintf(b, sizeof b, "%s/dsync", argv[1]);
	long long t0 = now_us();
	int fd = open(a, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int ds = open(b, O_RDWR | O_CREAT | O_TRUNC | O_DSYNC, 0644);
	if (fd < 0 || ds < 0) {
		perror("open");
		return 1;
	}
	for (int i = 0; i < 10; i++) {
		if (write(fd, "x", 1) != 1 || fdatasync(fd) != 0) {
			perror("fdatasync");
			return 1;
		}
	}
	for (int i = 0; i < 3; i++)
		fsync(fd);
	sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
	write(ds, "y", 1);
	pwrite(ds, "y", 1, 1);
	int d2 = dup(ds);
	write(d2, "z", 1);
	int d3 = fcntl(ds, F_DUPFD_CLOEXEC, 100);
	pwrite(d3, "z", 1, 3);
	close(d2);
	close(d3);
	close(ds);
	/* A recycled descriptor number must not inherit O_DSYNC. */
	int p2 = open(b, O_RDWR);
	write(p2, "w", 1);
	write(fd, "w", 1);
	close(p2);
	close(fd);
	printf("%lld\n", now_us() - t0);
	return 0;
}
