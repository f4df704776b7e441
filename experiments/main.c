/* main.c - the skv command-line program (placeholder until the program issue). */
#include <stdio.h>
#include <string.h>
#include "skv.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("skv %s\n", skv_version());
		return 0;
	}
	fprintf(stderr, "usage: skv --version\n");
	return argc > 1 ? 2 : 0;
}
