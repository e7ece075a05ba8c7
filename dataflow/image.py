"""``tf.image``: resizing, flips, crops, dtype conversion, standardization, colour
spaces and adjustments, image quality measures, bounding boxes, encoding and decoding
(see ``ops/image/``)."""
# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

from ._util.missing_names import missing_name_hook
from .ops.image.color import (
    adjust_gamma as adjust_gamma,
    adjust_hue as adjust_hue,
    adjust_saturation as adjust_saturation,
    hsv_to_rgb as hsv_to_rgb,
    random_hue as random_hue,
    random_saturation as random_saturation,
    rgb_to_hsv as rgb_to_hsv,
    rgb_to_yiq as rgb_to_yiq,
    rgb_to_yuv as rgb_to_yuv,
    yiq_to_rgb as yiq_to_rgb,
    yuv_to_rgb as yuv_to_rgb,
)
from .ops.image.quality import (
    image_gradients as image_gradients,
    psnr as psnr,
    sobel_edges as sobel_edges,
    ssim as ssim,
    ssim_multiscale as ssim_multiscale,
    total_variation as total_variation,
)
from .ops.image.geometry import (
    extract_image_patches as extract_image_patches,
    extract_patches as extract_patches,
    rot90 as rot90,
    transpose_image as transpose,
    transpose_image as transpose_image,
)
from .ops.image.resize import (
    resize_area as resize_area,
    resize_bicubic as resize_bicubic,
    resize_image_with_pad as resize_image_with_pad,
    resize_images as resize,
    resize_images as resize_images,
)
from .ops.image.nms import (
    combined_non_max_suppression as combined_non_max_suppression,
    non_max_suppression as non_max_suppression,
    non_max_suppression_overlaps as non_max_suppression_overlaps,
    non_max_suppression_padded as non_max_suppression_padded,
    non_max_suppression_with_scores as non_max_suppression_with_scores,
)
from .ops.image.boxes import (
    crop_and_resize as crop_and_resize,
    draw_bounding_boxes as draw_bounding_boxes,
)
from .ops.image.png import (
    decode_and_crop_jpeg as decode_and_crop_jpeg,
    encode_png as encode_png,
)
from .ops.image.gif import decode_gif as decode_gif
from .ops.image.jpeg import (
    adjust_jpeg_quality as adjust_jpeg_quality,
    encode_jpeg as encode_jpeg,
    extract_jpeg_shape as extract_jpeg_shape,
    is_jpeg as is_jpeg,
    random_jpeg_quality as random_jpeg_quality,
)
from .ops.image.distort_box import (
    sample_distorted_bounding_box as sample_distorted_bounding_box,
)
from .ops.image.image_ops import (
    adjust_brightness as adjust_brightness,
    adjust_contrast as adjust_contrast,
    central_crop as central_crop,
    convert_image_dtype as convert_image_dtype,
    crop_to_bounding_box as crop_to_bounding_box,
    decode_image as decode_bmp,
    decode_image as decode_image,
    decode_jpeg as decode_jpeg,
    decode_png as decode_png,
    flip_left_right as flip_left_right,
    flip_up_down as flip_up_down,
    grayscale_to_rgb as grayscale_to_rgb,
    pad_to_bounding_box as pad_to_bounding_box,
    per_image_standardization as per_image_standardization,
    random_brightness as random_brightness,
    random_contrast as random_contrast,
    random_crop as random_crop,
    random_flip_left_right as random_flip_left_right,
    random_flip_up_down as random_flip_up_down,
    resize_bilinear as resize_bilinear,
    resize_image_with_crop_or_pad as resize_image_with_crop_or_pad,
    resize_image_with_crop_or_pad as resize_with_crop_or_pad,
    resize_nearest_neighbor as resize_nearest_neighbor,
    ResizeMethod as ResizeMethod,
    rgb_to_grayscale as rgb_to_grayscale,
)

__getattr__ = missing_name_hook("image", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
