"""Test helpers shipped with dataflow (gradient checks, cluster fixtures). Nothing in the
package imports this module."""
