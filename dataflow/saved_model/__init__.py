"""``tf.saved_model`` (TF1's ``tf.compat.v1.saved_model``): SavedModels both ways with
TensorFlow. Explicit re-exports only; the logic is in ``dataflow/train/saved_model/``
(see docs/tf1_files.md)."""

# ruff: noqa: F401, I001 - public namespace: explicit re-exports only

from . import builder as builder
from . import constants as constants
from . import loader as loader
from . import main_op as main_op
from . import signature_constants as signature_constants
from . import signature_def_utils as signature_def_utils
from . import tag_constants as tag_constants
from . import utils as utils
from .builder import SavedModelBuilder as Builder
from .loader import (
    contains_saved_model as contains_saved_model,
    load as load,
    maybe_saved_model_directory as maybe_saved_model_directory,
)
from .signature_def_utils import (
    build_signature_def as build_signature_def,
    classification_signature_def as classification_signature_def,
    is_valid_signature as is_valid_signature,
    predict_signature_def as predict_signature_def,
    regression_signature_def as regression_signature_def,
)
from .main_op import main_op_with_restore as main_op_with_restore
from ..train.saved_model.builder import simple_save as simple_save
from .utils import (
    build_tensor_info as build_tensor_info,
    get_tensor_from_tensor_info as get_tensor_from_tensor_info,
)
from ..train.saved_model.constants import (
    ASSETS_DIRECTORY as ASSETS_DIRECTORY,
    ASSETS_KEY as ASSETS_KEY,
    CLASSIFY_INPUTS as CLASSIFY_INPUTS,
    CLASSIFY_METHOD_NAME as CLASSIFY_METHOD_NAME,
    CLASSIFY_OUTPUT_CLASSES as CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES as CLASSIFY_OUTPUT_SCORES,
    DEBUG_DIRECTORY as DEBUG_DIRECTORY,
    DEBUG_INFO_FILENAME_PB as DEBUG_INFO_FILENAME_PB,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY as DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    GPU as GPU,
    LEGACY_INIT_OP_KEY as LEGACY_INIT_OP_KEY,
    MAIN_OP_KEY as MAIN_OP_KEY,
    PREDICT_INPUTS as PREDICT_INPUTS,
    PREDICT_METHOD_NAME as PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS as PREDICT_OUTPUTS,
    REGRESS_INPUTS as REGRESS_INPUTS,
    REGRESS_METHOD_NAME as REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS as REGRESS_OUTPUTS,
    SAVED_MODEL_FILENAME_PB as SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT as SAVED_MODEL_FILENAME_PBTXT,
    SAVED_MODEL_SCHEMA_VERSION as SAVED_MODEL_SCHEMA_VERSION,
    SERVING as SERVING,
    TPU as TPU,
    TRAINING as TRAINING,
    VARIABLES_DIRECTORY as VARIABLES_DIRECTORY,
    VARIABLES_FILENAME as VARIABLES_FILENAME,
)

# Beyond TF1: a legacy model scored over a Dask collection (dataflow/train/scoring/).
from ..train.scoring import LegacyModel as LegacyModel
from ..train.scoring import map_blocks as map_blocks
from .._util.missing_names import missing_name_hook

# TF1's names of this namespace not provided (TF 2's save/load, Asset) say so by name.
__getattr__ = missing_name_hook("saved_model", __name__)
del missing_name_hook
