// Test helper: prints the arguments it received (without argv[0]) as one
// JSON array, so tests see exactly what trialshim handed the trainer.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::cout << nlohmann::json(args).dump(
                   -1, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n";
  return 0;
}
