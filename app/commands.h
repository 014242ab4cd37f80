// The exspec subcommands; argv[first] is the first flag after the subcommand name.
#pragma once

namespace exspec {
int cmd_make_model(int argc, char** argv, int first);
int cmd_generate(int argc, char** argv, int first);
int cmd_forward(int argc, char** argv, int first);
int cmd_check(int argc, char** argv, int first);
int cmd_bench(int argc, char** argv, int first);
int cmd_batch(int argc, char** argv, int first);
int cmd_shortlist(int argc, char** argv, int first);
int cmd_script(int argc, char** argv, int first);  // needs app/dispatch.cpp's run_exspec
}  // namespace exspec
