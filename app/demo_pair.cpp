#include "app/demo_pair.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "model/tools/make_model.h"

#ifndef EXSPEC_DEMO_DIR
#define EXSPEC_DEMO_DIR ""
#endif

namespace exspec {
namespace fs = std::filesystem;
namespace {

bool is_checkpoint(const std::string& dir) {
  return fs::exists(dir + "/model.safetensors") || fs::exists(dir + "/model.safetensors.index.json");
}

struct DemoPair {
  std::string model, draft;
};

DemoPair random_pair(const std::string& cache, const char* command) {
  DemoPair p{cache + "/demo", cache + "/demo-draft"};
  if (!is_checkpoint(p.model)) {
    std::cerr << "exspec " << command << ": generating a random demo model (llama/demo, seed 1) into " << p.model
              << " (first start only)" << std::endl;
    fs::create_directories(cache);
    MakeModelOptions o;
    o.arch = "llama";
    o.preset = "demo";
    o.seed = 1;
    o.out = p.model;
    make_model(o);
  }
  if (!is_checkpoint(p.draft)) make_draft(p.model, 1, p.draft);
  return p;
}

DemoPair demo_pair(const std::string& cache_dir, const char* command) {
  const char* env = std::getenv("EXSPEC_DEMO_DIR");
  const std::string shipped = env && *env ? env : EXSPEC_DEMO_DIR;
  if (!shipped.empty() && is_checkpoint(shipped + "/target") && is_checkpoint(shipped + "/draft")) {
    std::cerr << "exspec " << command << ": no --model given: serving the trained demo pair in " << shipped << std::endl;
    return {shipped + "/target", shipped + "/draft"};
  }
  std::cerr << "exspec " << command << ": no trained demo pair found" << (shipped.empty() ? "" : " in " + shipped)
            << "; using a random one" << std::endl;
  return random_pair(cache_dir, command);
}

}  // namespace

void use_demo_pair(Settings& c, const char* command) {
  const DemoPair demo = demo_pair(c.cache_dir.empty() ? default_cache_dir() : c.cache_dir, command);
  c.model = demo.model;
  if (c.draft.empty()) c.draft = demo.draft;
  if (c.served_model_name.empty()) c.served_model_name = "demo";
}

}  // namespace exspec
