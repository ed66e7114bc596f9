"""What tests share (no test module imports another): fakes of a model, a task and its
examples (`fakes`), hostile run folders for report tests (`report_runs`), GGUF files built
byte by byte (`gguf_factory`), CLI runners (`cli`, on the fake model: `cli_model`),
reading a run folder (`run_folder`), worked examples (`person`, `movie`)."""
