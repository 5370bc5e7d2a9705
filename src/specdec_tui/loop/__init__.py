"""The application layer: one owner per behaviour (trial state machine, health watch, sweep, replay,
session index, journal feed). UI-free: the panel and the headless commands both drive it."""
