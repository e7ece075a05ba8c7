"""``tf.train``: optimizers, savers, queue runners, hooks, cluster specs (layer 3).

Explicit re-exports only; each block belongs to one module.
"""

# ruff: noqa: I001 - public namespace

# --- coordinator.py, queue_runner.py -----------------------------------------------------
from .sessions.coordinator import Coordinator as Coordinator
from .moving_averages import ExponentialMovingAverage as ExponentialMovingAverage
from .input.queue_runner import (
    QueueRunner as QueueRunner,
    add_queue_runner as add_queue_runner,
    start_queue_runners as start_queue_runners,
)

# --- input.py, batching.py (queue-based input pipelines) ---------------------------------
from .input.producers import (
    input_producer as input_producer,
    limit_epochs as limit_epochs,
    match_filenames_once as match_filenames_once,
    range_input_producer as range_input_producer,
    slice_input_producer as slice_input_producer,
    string_input_producer as string_input_producer,
)
from .input.batching import (
    batch as batch,
    batch_join as batch_join,
    maybe_batch as maybe_batch,
    maybe_batch_join as maybe_batch_join,
    maybe_shuffle_batch as maybe_shuffle_batch,
    maybe_shuffle_batch_join as maybe_shuffle_batch_join,
    shuffle_batch as shuffle_batch,
    shuffle_batch_join as shuffle_batch_join,
)

# --- checkpoint_utils.py, saver.py -------------------------------------------------------
from .checkpoint_utils import (
    CheckpointReader as CheckpointReader,
    NewCheckpointReader as NewCheckpointReader,
    init_from_checkpoint as init_from_checkpoint,
)
from .meta_graph import export_meta_graph as export_meta_graph
from .checkpoint_management import (
    checkpoints_iterator as checkpoints_iterator,
    generate_checkpoint_state_proto as generate_checkpoint_state_proto,
    get_checkpoint_mtimes as get_checkpoint_mtimes,
    load_checkpoint as load_checkpoint,
    remove_checkpoint as remove_checkpoint,
)
from ..summary.event_reader import summary_iterator as summary_iterator
from .saver import (
    CheckpointState as CheckpointState,
    Saver as Saver,
    checkpoint_exists as checkpoint_exists,
    get_checkpoint_state as get_checkpoint_state,
    import_meta_graph as import_meta_graph,
    latest_checkpoint as latest_checkpoint,
    list_variables as list_variables,
    load_variable as load_variable,
    update_checkpoint_state as update_checkpoint_state,
)

# --- optimizer.py, optimizers.py, learning_rate.py, global_step.py ----------------------
from .training_util import (
    assert_global_step as assert_global_step,
    create_global_step as create_global_step,
    get_global_step as get_global_step,
    get_or_create_global_step as get_or_create_global_step,
    global_step as global_step,
)
from .learning_rate import (
    cosine_decay as cosine_decay,
    cosine_decay_restarts as cosine_decay_restarts,
    exponential_decay as exponential_decay,
    inverse_time_decay as inverse_time_decay,
    linear_cosine_decay as linear_cosine_decay,
    natural_exp_decay as natural_exp_decay,
    noisy_linear_cosine_decay as noisy_linear_cosine_decay,
    piecewise_constant as piecewise_constant,
    polynomial_decay as polynomial_decay,
)
from .optimizers.optimizer import Optimizer as Optimizer
from .optimizers.standard import (
    AdagradOptimizer as AdagradOptimizer,
    AdamOptimizer as AdamOptimizer,
    GradientDescentOptimizer as GradientDescentOptimizer,
    MomentumOptimizer as MomentumOptimizer,
    RMSPropOptimizer as RMSPropOptimizer,
)

# --- ops/io/example_proto.py (tf.train.Example and its parts, as protobuf classes) -------
from ..ops.io.example_proto import (
    BytesList as BytesList,
    Example as Example,
    Feature as Feature,
    FeatureList as FeatureList,
    FeatureLists as FeatureLists,
    Features as Features,
    FloatList as FloatList,
    Int64List as Int64List,
    SequenceExample as SequenceExample,
)

# --- cluster_spec.py, device_setter.py (distributed execution) ---------------------------
from .cluster_spec import ClusterSpec as ClusterSpec
from .device_setter import replica_device_setter as replica_device_setter
from ..runtime.server.server import Server as Server
from ..runtime.server.server import ServerDef as ServerDef
from tensorboard.compat.proto.cluster_pb2 import ClusterDef as ClusterDef
from tensorboard.compat.proto.cluster_pb2 import JobDef as JobDef
from tensorboard.compat.proto.saver_pb2 import SaverDef as SaverDef
from .input import queue_runner as queue_runner
from .optimizers.sync_replicas import SyncReplicasOptimizer as SyncReplicasOptimizer
from .sessions.supervisor import Supervisor as Supervisor
from .sessions.supervisor_services import LooperThread as LooperThread

# --- hooks.py, monitored_session.py ------------------------------------------------------
from .sessions.hooks import (
    CheckpointSaverHook as CheckpointSaverHook,
    CheckpointSaverListener as CheckpointSaverListener,
    LoggingTensorHook as LoggingTensorHook,
    NanLossDuringTrainingError as NanLossDuringTrainingError,
    NanTensorHook as NanTensorHook,
    ProgressBarHook as ProgressBarHook,
    SecondOrStepTimer as SecondOrStepTimer,
    SessionRunArgs as SessionRunArgs,
    SessionRunContext as SessionRunContext,
    SessionRunHook as SessionRunHook,
    SessionRunValues as SessionRunValues,
    StopAtStepHook as StopAtStepHook,
)
from .sessions.monitored_session import (
    ChiefSessionCreator as ChiefSessionCreator,
    MonitoredSession as MonitoredSession,
    MonitoredTrainingSession as MonitoredTrainingSession,
    SessionCreator as SessionCreator,
    SingularMonitoredSession as SingularMonitoredSession,
    WorkerSessionCreator as WorkerSessionCreator,
)
from .sessions.progress import HookedSession as HookedSession
from .sessions.basic_hooks import (
    FeedFnHook as FeedFnHook,
    FinalOpsHook as FinalOpsHook,
    GlobalStepWaiterHook as GlobalStepWaiterHook,
    basic_train_loop as basic_train_loop,
)
from .sessions.scaffold import Scaffold as Scaffold
from .warm_starting import VocabInfo as VocabInfo, warm_start as warm_start
from .sessions.session_manager import SessionManager as SessionManager
from .sessions.profiler_hook import ProfilerHook as ProfilerHook
from .graph_io import write_graph as write_graph
from .optimizers.extra import (
    AdadeltaOptimizer as AdadeltaOptimizer,
    AdagradDAOptimizer as AdagradDAOptimizer,
    FtrlOptimizer as FtrlOptimizer,
    ProximalAdagradOptimizer as ProximalAdagradOptimizer,
    ProximalGradientDescentOptimizer as ProximalGradientDescentOptimizer,
)
from .sessions.summary_hooks import (
    StepCounterHook as StepCounterHook,
    SummarySaverHook as SummarySaverHook,
)

from .._util.missing_names import missing_name_hook

piecewise_constant_decay = piecewise_constant  # TF1's second name for it

__getattr__ = missing_name_hook("train", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
