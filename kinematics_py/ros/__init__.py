"""The ROS 2 layer: the only subpackage that imports rclpy, tf2_ros, launch/launch_ros or *_msgs packages."""
