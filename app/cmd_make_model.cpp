#include <iostream>

#include "app/args.h"
#include "app/commands.h"
#include "model/architectures.h"
#include "model/tools/make_model.h"

namespace exspec {

int cmd_make_model(int argc, char** argv, int first) {
  Args a(argc, argv, first,
         {"arch", "preset", "seed", "out", "dtype", "shards", "damp-from", "damp-std", "draft-of", "layers"}, {"help", "attention-bias", "longrope"});
  if (a.has("help")) {
    std::cout << "exspec make-model --arch " << architecture_names("|") << " --preset tiny|small|kquant|demo|1b|150m --seed N --out DIR\n"
                 "                  [--dtype float32|float64|float16|bfloat16] [--shards N]\n"
                 "                  [--damp-from L] [--damp-std S] [--attention-bias] [--longrope (phi3)]\n"
                 "exspec make-model --draft-of TARGET_DIR --layers N --out DIR\n"
                 "See docs/models.md.\n";
    return 0;
  }
  if (a.has("draft-of")) {
    make_draft(a.need("draft-of"), a.get_int("layers", 1), a.need("out"));
    std::cerr << "wrote draft (" << a.get_int("layers", 1) << " layers of " << a.get("draft-of", "") << ") to "
              << a.get("out", "") << "\n";
    return 0;
  }
  MakeModelOptions o;
  o.arch = a.get("arch", o.arch);
  o.preset = a.get("preset", o.preset);
  o.seed = static_cast<uint64_t>(a.get_int("seed", 0));
  o.out = a.need("out");
  o.dtype = a.get("dtype", o.dtype);
  o.shards = static_cast<int>(a.get_int("shards", 1));
  o.attention_bias = a.has("attention-bias");
  o.longrope = a.has("longrope");
  o.damp_from = a.get_int("damp-from", o.damp_from);
  if (a.has("damp-std")) o.damp_std = std::stod(a.get("damp-std", ""));
  make_model(o);
  std::cerr << "wrote " << o.arch << "/" << o.preset << " (seed " << o.seed << ") to " << o.out << "\n";
  return 0;
}

}  // namespace exspec
