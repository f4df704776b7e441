/* main.c - the skv command-line program: everything is in skv_app_main (cli.c) so tests can call it. */
#include "app.h"

int main(int argc, char **argv) { return skv_app_main(argc, argv); }
