// `exspec COMMAND FLAGS...` from argv: the usage, the subcommand, and the error line and exit
// status of one that throws. main() runs it once; `exspec script` once a line.
#pragma once

namespace exspec {

// argv[0] is the program, argv[1] the command. `in_script`: a line of `exspec script`, where the
// commands that run until a signal or own the process's signals (serve, batch) and script itself
// are refused.
int run_exspec(int argc, char** argv, bool in_script = false);

}  // namespace exspec
