"""What tests share (no test module imports another, nor a conftest): fakes of a model,
a task and its examples (`fakes`), the `run_fake` fixture's type (`run_fake`), hostile
run folders for report tests (`report_runs`), GGUF files built byte by byte
(`gguf_factory`), CLI runners (`cli`, on the fake model: `cli_model`), reading a run
folder (`run_folder`), worked examples (`person`, `movie`), a benchmarks/ or scripts/
file imported as a module (`scripts`)."""
