"""The names a SavedModel's files, tags and signatures use, as TF1's
``saved_model.constants``, ``tag_constants`` and ``signature_constants``."""

from __future__ import annotations

# --- files and collections (tf.saved_model.constants) -----------------------------------
SAVED_MODEL_SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
EXTRA_ASSETS_DIRECTORY = "assets.extra"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
ASSETS_KEY = "saved_model_assets"
MAIN_OP_KEY = "saved_model_main_op"
LEGACY_INIT_OP_KEY = "legacy_init_op"
TRAIN_OP_KEY = "saved_model_train_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"

# --- tags (tf.saved_model.tag_constants) ------------------------------------------------
SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

# --- signatures (tf.saved_model.signature_constants) ------------------------------------
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
CLASSIFY_INPUTS = "inputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
PREDICT_INPUTS = "inputs"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_OUTPUTS = "outputs"
REGRESS_INPUTS = "inputs"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_OUTPUTS = "outputs"
SUPERVISED_TRAIN_METHOD_NAME = "tensorflow/supervised/training"
SUPERVISED_EVAL_METHOD_NAME = "tensorflow/supervised/eval"
