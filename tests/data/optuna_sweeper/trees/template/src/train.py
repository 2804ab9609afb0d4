"""The template's src/train.py, reduced to its Hydra entry: composes
configs/train.yaml and returns the optimized metric (a stand-in value)."""
import hydra
from omegaconf import DictConfig


@hydra.main(version_base="1.3", config_path="../configs", config_name="train.yaml")
def main(cfg: DictConfig) -> float:
    return float(cfg.model.optimizer.lr)


if __name__ == "__main__":
    main()
