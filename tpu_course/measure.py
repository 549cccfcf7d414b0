"""Timing and plotting: measure on the machine at hand, report ratios, plot them."""
import statistics
import time


def _wait_for(result):
    """Block until TensorFlow has really computed `result` (ops may run asynchronously)."""
    import tensorflow as tf
    for value in tf.nest.flatten(result, expand_composites=True):
        if hasattr(value, "numpy"):
            value.numpy()
    return result


def time_calls(function, *args, repeats=10):
    """Seconds taken by each of `repeats` calls of function(*args), results awaited."""
    if repeats < 1:
        raise ValueError(f"repeats={repeats!r}: time at least 1 call")
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        _wait_for(function(*args))
        seconds.append(time.perf_counter() - start)
    return seconds


def median(seconds):
    return statistics.median(seconds)


def ratios(seconds_by_label):
    """Each median relative to the first label's: {label: first / label}, so speed-ups read > 1."""
    labels = list(seconds_by_label)
    if not labels:
        raise ValueError("nothing to compare: pass {label: [seconds, ...]}")
    baseline = median(seconds_by_label[labels[0]])
    return {label: baseline / median(seconds_by_label[label]) for label in labels}


def bar_chart(seconds_by_label, title, ylabel="milliseconds (median)"):
    """A bar per label (median of its timings), each annotated with its ratio to the first."""
    import matplotlib.pyplot as plt
    labels = list(seconds_by_label)
    medians_ms = [1000 * median(seconds_by_label[label]) for label in labels]
    figure, axes = plt.subplots(figsize=(1.8 + 1.6 * len(labels), 3.2))
    bars = axes.bar(labels, medians_ms, color="#4c72b0")
    for bar, ratio in zip(bars, ratios(seconds_by_label).values()):
        text = f"{ratio:.3g}× faster" if ratio >= 1 else f"{1 / ratio:.3g}× slower"
        axes.annotate(text if bar is not bars[0] else "baseline",
                      (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                      ha="center", va="bottom", fontsize=9)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.margins(y=0.2)
    figure.tight_layout()
    plt.show()
    return figure
