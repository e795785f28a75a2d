// SPDX-License-Identifier: MIT
/*
 * replay.c - a main for the fuzz targets in builds without libFuzzer:
 * runs LLVMFuzzerTestOneInput once on every file named on the command
 * line (a directory means every regular file in it), so the corpus in
 * tests/fuzz/corpus/ is replayed by the normal and sanitizer test runs.
 * Exit 0 when every input ran (a crash or sanitizer report ends the
 * process with its own status), 2 on usage or I/O errors.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0, r;
	uint8_t *buf = malloc(cap);
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int ran = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			bad++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += run_file(argv[i]) != 0;
			ran++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
			if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			bad += run_file(p) != 0;
			ran++;
		}
		if (d)
			closedir(d);
	}
	printf("%d inputs run\n", ran);
	return bad ? 2 : 0;
}
