/* main.c - the skv command-line program: everything is in cli_main (cli.c) so tests can call it. */
#include "cli/cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
