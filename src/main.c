/* main.c: command-line arguments only; the run itself is run.c. */
#include <stdio.h>
int main(void) {
  fprintf(stderr, "cdsim: under construction\n");
  return 1;
}
