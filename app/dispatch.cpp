#include "app/dispatch.h"

#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "app/cmd_serve.h"
#include "app/cmd_tokenize.h"
#include "app/commands.h"
#include "model/kernels/isa.h"

namespace exspec {
namespace {

void usage(std::ostream& out) {
  out << "usage: exspec <command> [flags]\n\n"
         "commands:\n"
         "  make-model   write a Hugging Face checkpoint with seeded weights, or a draft of one\n"
         "  generate     greedy decoding or sampling of prompts (--oracle: the reference loop), JSON lines on stdout\n"
         "  forward      write the logits of prompts to a safetensors file (for reference checks)\n"
         "  check        a checkpoint's incremental decoding on every serving path against its full forward\n"
         "  bench        every mode and batch size on the prompt sets: results.json, summary.md, plots\n"
         "  shortlist    the tokens a target emits on prompts, ranked: a draft's head over the first N (--draft-shortlist)\n"
         "  tokenize     text -> ids, or ids -> text, with a model's tokenizer.json\n"
         "  serve        the OpenAI-compatible HTTP server (exspec serve --help)\n"
         "  batch        OpenAI Batch API JSONL files offline, resumable (exspec batch --help)\n"
         "  script       the commands of a file, one a line, in this one process (exspec script --help)\n\n"
         "run `exspec <command> --help` for the flags of a command; README.md and docs/ (one page a\n"
         "topic) for the rest\n";
}

int command(const std::string& cmd, int argc, char** argv) {
  if (cmd == "make-model") return cmd_make_model(argc, argv, 2);
  if (cmd == "generate") return cmd_generate(argc, argv, 2);
  if (cmd == "forward") return cmd_forward(argc, argv, 2);
  if (cmd == "check") return cmd_check(argc, argv, 2);
  if (cmd == "bench") return cmd_bench(argc, argv, 2);
  if (cmd == "shortlist") return cmd_shortlist(argc, argv, 2);
  if (cmd == "tokenize") return cmd_tokenize(argc - 1, argv + 1);
  if (cmd == "serve") return cmd_serve(argc, argv, 2);
  if (cmd == "batch") return cmd_batch(argc, argv, 2);
  if (cmd == "script") return cmd_script(argc, argv, 2);
  std::cerr << "exspec: unknown command \"" << cmd << "\"\n\n";
  usage(std::cerr);
  return 2;
}

}  // namespace

int run_exspec(int argc, char** argv, bool in_script) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (in_script && (cmd == "serve" || cmd == "batch" || cmd == "script")) {
    std::cerr << "exspec script: " << cmd << " runs in a process of its own, not as a line of a script\n";
    return 2;
  }
  try {
    isa::cap_libraries();  // EXSPEC_ISA: checked first, and libtorch's own paths capped alike
    return command(cmd, argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "exspec " << cmd << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace exspec
