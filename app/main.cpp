// exspec: batch speculative decoding server. One executable, one subcommand per job
// (app/dispatch.cpp).
#include "app/dispatch.h"

int main(int argc, char** argv) { return exspec::run_exspec(argc, argv); }
