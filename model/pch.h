// Precompiled header for model/ TUs: ATen is the expensive part of every tensor TU.
#pragma once
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
