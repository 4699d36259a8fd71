"""The language model of Q02/Q03: config, model, data, checkpoint, training loop, sampling.

`config` (`ModelConfig`, `TrainConfig`, `AttentionMode`) imports nothing; `model` is the fast
path, tested equal to `attention_ref.reference`; `data` holds Tiny Shakespeare and its
`Vocab`; `checkpoint` is the one place a checkpoint's keys live; `train` is the loop with
typed callbacks; `sampling` generates text. Nothing here imports mlflow.
"""
