"""Gymnasium environments for Understudy worlds.

Importing this package registers ``understudy/<world>-<task>`` for every task
of the worlds it finds ($UNDERSTUDY_WORLDS_DIR, else the checkout's
``fixtures/worlds``), so that::

    import gymnasium as gym
    import understudy_gym

    env = gym.make("understudy/support-desk-duplicate-charge", model="my-agent")

starts `understudy serve --stdio` for that world. ``gym.make(...,
url="http://127.0.0.1:8000")`` uses a running server instead.
"""

from .client import HttpClient, HttpServer, ServerGone, StdioClient, UnderstudyError, find_binary
from .env import ACTION_MAX, OBSERVATION_MAX, UnderstudyEnv, UnicodeText
from .helpers import EpisodeResult, run_episode, scripted_policy, tools_as_openai_functions
from .registration import default_world_dirs, gym_id, register_worlds, world_tasks

__version__ = "0.1.0"

__all__ = [
    "ACTION_MAX",
    "OBSERVATION_MAX",
    "EpisodeResult",
    "HttpClient",
    "HttpServer",
    "ServerGone",
    "StdioClient",
    "UnderstudyEnv",
    "UnderstudyError",
    "UnicodeText",
    "default_world_dirs",
    "find_binary",
    "gym_id",
    "register_worlds",
    "run_episode",
    "scripted_policy",
    "tools_as_openai_functions",
    "world_tasks",
]

register_worlds()
