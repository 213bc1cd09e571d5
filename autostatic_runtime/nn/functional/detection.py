"""YOLOv3's loss (Paddle's ``paddle.vision.ops.yolo_loss``), as one target-assignment op and
differentiable ops on the network's output.

``x`` is ``[N, M * (5 + C), H, W]``: per anchor of ``anchor_mask`` (M of them) and cell, the
box offsets ``tx, ty, tw, th``, an objectness logit and C class logits. Ground-truth boxes
``gt_box`` ``[N, B, 4]`` are centre x, y, width, height relative to the image (a box of zero
width or height is padding). As Paddle computes it, per image:

- each predicted box whose best IoU with a ground-truth box exceeds ``ignore_thresh`` is
  left out of the objectness loss; every other cell and anchor is a negative;
- each ground-truth box is matched to the anchor (of all ``anchors``) its shape fits best;
  if that anchor is one of ``anchor_mask``, the cell its centre falls in learns it:
  sigmoid cross entropy on ``tx, ty``, L1 on ``tw, th`` (both scaled by ``2 - w * h`` and
  the box's score), sigmoid cross entropy on the classes (label smoothing ``min(1 / C,
  1 / 40)``) and on objectness (target 1, weight: the score);

(``scale_x_y`` stretches the decoded centres for the IoU test, as Paddle's.)
``yolo_loss_targets`` (no gradient: targets and weights) does the matching; the loss itself
is made of ``take_along_axis``, sigmoid cross entropy and ``abs``, whose gradients give
the gradient w.r.t. ``x`` with the targets held fixed, as Paddle's ``yolo_loss_grad``.
"""

from __future__ import annotations

from typing import Any

from autostatic_runtime.nn.functional._utils import shape_error
from autostatic_runtime.ops.registry import Spec, dtype_of, op, shape_of

__all__ = ["yolo_loss"]


def _iou(xp, ax, ay, aw, ah, bx, by, bw, bh):
    """IoU of boxes given by centre and size (broadcasting)."""
    inter_w = xp.minimum(ax + aw / 2, bx + bw / 2) - xp.maximum(ax - aw / 2, bx - bw / 2)
    inter_h = xp.minimum(ay + ah / 2, by + bh / 2) - xp.maximum(ay - ah / 2, by - bh / 2)
    inter = xp.where((inter_w < 0) | (inter_h < 0), xp.zeros_like(inter_w), inter_w * inter_h)
    return inter / (aw * ah + bw * bh - inter)


def _sigmoid(xp, v):
    return 1.0 / (1.0 + xp.exp(-v))


@op("yolo_loss_targets")
class YoloLossTargets:
    """Matching of ground-truth boxes to YOLOv3 outputs: per box the flat index of its cell
    and anchor, its weight (score, 0 if unmatched), location scale, targets ``tx, ty, tw,
    th`` and label; per cell and anchor the objectness mask (-1: ignored, 0: negative,
    > 0: a positive's score)."""

    multi_output = True
    grad = None  # targets and weights: constants of the loss

    def infer(x, gt_box, gt_label, gt_score, anchors, anchor_mask, class_num, ignore_thresh,
              downsample_ratio, scale_x_y):  # fmt: skip
        n, _, h, w = shape_of(x)
        b = shape_of(gt_box)[1]
        per_box = Spec((n, b), dtype_of(x))
        index = Spec((n, b), "int64")
        return (index, per_box, per_box, per_box, per_box, per_box, per_box, index,
                Spec((n, len(anchor_mask), h, w), dtype_of(x)))  # fmt: skip

    def kernel(xp, x, gt_box, gt_label, gt_score, anchors, anchor_mask, class_num,
               ignore_thresh, downsample_ratio, scale_x_y):  # fmt: skip
        n, _, h, w = x.shape
        m, b, dt = len(anchor_mask), gt_box.shape[1], x.dtype
        size = float(downsample_ratio * h)
        xr = xp.reshape(x, (n, m, 5 + class_num, h, w))
        mask_w = xp.asarray([anchors[2 * a] / size for a in anchor_mask], dtype=dt)
        mask_h = xp.asarray([anchors[2 * a + 1] / size for a in anchor_mask], dtype=dt)
        cols = xp.reshape(xp.arange(w, dtype=dt), (1, 1, 1, w))
        rows = xp.reshape(xp.arange(h, dtype=dt), (1, 1, h, 1))
        bias = -0.5 * (scale_x_y - 1.0)  # Paddle divides both centres by the grid's height
        px = (cols + _sigmoid(xp, xr[:, :, 0, :, :]) * scale_x_y + bias) / h
        py = (rows + _sigmoid(xp, xr[:, :, 1, :, :]) * scale_x_y + bias) / h
        pw = xp.exp(xr[:, :, 2, :, :]) * xp.reshape(mask_w, (1, m, 1, 1))
        ph = xp.exp(xr[:, :, 3, :, :]) * xp.reshape(mask_h, (1, m, 1, 1))
        gx, gy = gt_box[:, :, 0], gt_box[:, :, 1]
        gw, gh = gt_box[:, :, 2], gt_box[:, :, 3]
        valid = (gw >= 1e-6) & (gh >= 1e-6)
        obj = xp.zeros((n, m, h, w), dtype=dt)
        if b:
            def per_gt(v):  # [N, B] -> [N, 1, 1, 1, B]
                return xp.reshape(v, (n, 1, 1, 1, b))

            ious = _iou(xp, px[..., None], py[..., None], pw[..., None], ph[..., None],
                        per_gt(gx), per_gt(gy), per_gt(gw), per_gt(gh))  # fmt: skip
            ious = xp.where(per_gt(valid), ious, xp.zeros_like(ious))
            obj = xp.where(xp.max(ious, axis=4) > ignore_thresh, -xp.ones_like(obj), obj)
        all_w = xp.asarray([a / size for a in anchors[0::2]], dtype=dt)
        all_h = xp.asarray([a / size for a in anchors[1::2]], dtype=dt)
        shape_iou = _iou(xp, 0.0, 0.0, gw[..., None], gh[..., None], 0.0, 0.0, all_w, all_h)
        best = xp.argmax(shape_iou, axis=2)  # the first best anchor, as Paddle's strict '>'
        in_mask = best[..., None] == xp.asarray(anchor_mask, dtype=best.dtype)
        slot = xp.astype(xp.argmax(xp.astype(in_mask, xp.int32), axis=2), xp.int64)
        matched = valid & xp.any(in_mask, axis=2)
        gi = xp.clip(xp.astype(xp.floor(gx * w), xp.int64), 0, w - 1)
        gj = xp.clip(xp.astype(xp.floor(gy * h), xp.int64), 0, h - 1)
        score = xp.ones((n, b), dtype=dt) if gt_score is None else xp.astype(gt_score, dt)
        weight = xp.where(matched, score, xp.zeros_like(score))
        def one_dim(v, axis, count):  # [N] -> a one-hot [N, ...] along ``axis`` of obj
            shape = [1, 1, 1, 1]
            shape[axis] = count
            return xp.reshape(v, (n, 1, 1, 1)) == xp.reshape(xp.arange(count), tuple(shape))

        for t in range(b):  # later boxes overwrite earlier ones in a shared cell, as Paddle's
            hit = one_dim(slot[:, t], 1, m) & one_dim(gj[:, t], 2, h) & one_dim(gi[:, t], 3, w)
            hit = hit & xp.reshape(matched[:, t], (n, 1, 1, 1))
            obj = xp.where(hit, xp.reshape(score[:, t], (n, 1, 1, 1)), obj)
        index = (slot * h + gj) * w + gi
        anchor_w = xp.reshape(xp.take(all_w, xp.reshape(best, (-1,))), (n, b))
        anchor_h = xp.reshape(xp.take(all_h, xp.reshape(best, (-1,))), (n, b))
        one = xp.ones_like(gw)
        tw = xp.where(valid, xp.log(xp.where(valid, gw, one) / anchor_w), xp.zeros_like(gw))
        th = xp.where(valid, xp.log(xp.where(valid, gh, one) / anchor_h), xp.zeros_like(gh))
        tx = gx * h - xp.astype(gi, dt)  # Paddle scales both by the grid's height
        ty = gy * h - xp.astype(gj, dt)
        label = xp.where(matched, xp.astype(gt_label, xp.int64), xp.zeros_like(index))
        return index, weight, (2.0 - gw * gh) * weight, tx, ty, tw, th, label, obj


def yolo_loss(
    x: Any,
    gt_box: Any,
    gt_label: Any,
    anchors: Any,
    anchor_mask: Any,
    class_num: int,
    ignore_thresh: float,
    downsample_ratio: int,
    gt_score: Any = None,
    use_label_smooth: bool = True,
    name: str | None = None,
    scale_x_y: float = 1.0,
):
    """YOLOv3's loss per image ``[N]`` (Paddle's ``paddle.vision.ops.yolo_loss``; see the
    module docstring), differentiable w.r.t. ``x``."""
    import autostatic_runtime as rt

    anchors, anchor_mask = tuple(int(a) for a in anchors), tuple(int(a) for a in anchor_mask)
    m, k = len(anchor_mask), 5 + int(class_num)
    n, c, h, w = x.shape
    if c != m * k or h < 0 or w < 0:
        raise shape_error(
            "yolo_loss",
            f"x must be [N, {m} * (5 + {class_num}), H, W] with H and W known while tracing, "
            f"got {list(x.shape)}",
        )
    (index, weight, loc_scale, tx, ty, tw, th, label, obj) = YoloLossTargets(
        x, gt_box, gt_label, gt_score, anchors=anchors, anchor_mask=anchor_mask,
        class_num=int(class_num), ignore_thresh=float(ignore_thresh),
        downsample_ratio=int(downsample_ratio), scale_x_y=float(scale_x_y))  # fmt: skip
    bce = rt.nn.functional.binary_cross_entropy_with_logits
    cells = rt.reshape(rt.transpose(rt.reshape(x, [-1, m, k, h * w]), [0, 1, 3, 2]),
                       [-1, m * h * w, k])  # fmt: skip
    picked = rt.take_along_axis(cells, rt.unsqueeze(index, [2]), axis=1)  # [N, B, k]
    loc = (bce(picked[:, :, 0], tx, reduction="none") + bce(picked[:, :, 1], ty, reduction="none")
           + rt.abs(picked[:, :, 2] - tw) + rt.abs(picked[:, :, 3] - th))  # fmt: skip
    smooth = min(1.0 / class_num, 1.0 / 40) if use_label_smooth else 0.0
    target = rt.nn.functional.one_hot(label, int(class_num)) * (1.0 - 2 * smooth) + smooth
    classes = rt.sum(bce(picked[:, :, 5:], target, reduction="none"), axis=2)
    per_box = rt.sum(loc * loc_scale + classes * weight, axis=1)
    logits = rt.reshape(rt.reshape(x, [-1, m, k, h, w])[:, :, 4], [-1, m, h, w])
    positive = rt.where(obj > 1e-5, obj, rt.zeros_like(obj))
    negative = rt.cast((obj <= 1e-5) & (obj > -0.5), logits.dtype)
    objness = (bce(logits, rt.ones_like(logits), reduction="none") * positive
               + bce(logits, rt.zeros_like(logits), reduction="none") * negative)  # fmt: skip
    return per_box + rt.sum(objness, axis=[1, 2, 3])
